"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const LINKS = [
  { href: "/board", label: "Board" },
  { href: "/needs-you", label: "Needs you" },
  { href: "/runs", label: "Runs" },
  { href: "/loops", label: "Loops" },
  { href: "/budgets", label: "Budgets" },
  { href: "/insights", label: "Insights" },
  { href: "/usage", label: "Usage" },
  { href: "/deliveries", label: "Deliveries" },
  { href: "/audit", label: "Audit" },
  { href: "/repositories", label: "Repositories" },
  { href: "/workers", label: "Workers" },
  { href: "/tokens", label: "Tokens" },
];

export function NavLinks({ needsCount }: { needsCount: number }) {
  const path = usePathname();
  return (
    <nav aria-label="Main" className="-mx-1 flex gap-1 overflow-x-auto">
      {LINKS.map((l) => {
        const active = path === l.href || path.startsWith(`${l.href}/`);
        return (
          <Link
            key={l.href}
            href={l.href}
            aria-current={active ? "page" : undefined}
            className={`flex shrink-0 items-center gap-1.5 rounded-md px-2.5 py-1.5 text-sm ${active ? "bg-stone-900 text-white" : "text-stone-700 hover:bg-stone-200"}`}
          >
            {l.label}
            {l.href === "/needs-you" && needsCount > 0 ? (
              <span data-testid="needs-count" className={`rounded-full px-1.5 text-xs font-semibold ${active ? "bg-amber-400 text-stone-900" : "bg-amber-500 text-white"}`}>
                {needsCount}
              </span>
            ) : null}
          </Link>
        );
      })}
    </nav>
  );
}
