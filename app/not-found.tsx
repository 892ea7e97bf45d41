import Link from "next/link";

export default function NotFound() {
  return (
    <main className="mx-auto max-w-md p-8 text-center">
      <h1 className="text-xl font-semibold">Not found</h1>
      <p className="mt-2 text-stone-600">There is nothing at this address.</p>
      <Link href="/board" className="mt-4 inline-block text-emerald-700 underline">
        Back to the Board
      </Link>
    </main>
  );
}
