import Link from "next/link";

/** What a dashboard address with nothing behind it shows (answered 404, inside the navigation). */
export function NotFoundNotice() {
  return (
    <div data-testid="not-found" className="mx-auto max-w-md py-8 text-center">
      <h1 className="text-xl font-semibold">Not found</h1>
      <p className="mt-2 text-stone-600">There is nothing at this address: no page, or no Run, Item or repository of this id that you can see.</p>
      <p className="mt-4 flex justify-center gap-4 text-sm">
        <Link href="/board" className="text-emerald-800 underline">
          The Board
        </Link>
        <Link href="/runs" className="text-emerald-800 underline">
          All Runs
        </Link>
      </p>
    </div>
  );
}
