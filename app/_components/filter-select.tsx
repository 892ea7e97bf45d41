/** One filter of a page's GET form: "all" or one of the options. */
export function FilterSelect({ name, label, all, value, options }: { name: string; label: string; all: string; value: string | undefined | null; options: readonly string[] }) {
  return (
    <label className="flex flex-col gap-0.5">
      <span className="text-xs text-stone-600">{label}</span>
      <select name={name} defaultValue={value ?? ""} className="rounded border border-stone-300 bg-white px-2 py-1">
        <option value="">{all}</option>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}
