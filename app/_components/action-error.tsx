/** The API's refusal of an action, in its own words, beside the control that asked. */
export function ActionError({ error, className = "" }: { error: string | null; className?: string }) {
  return error ? (
    <span role="alert" className={`block text-xs text-red-700 ${className}`.trim()}>
      {error}
    </span>
  ) : null;
}
