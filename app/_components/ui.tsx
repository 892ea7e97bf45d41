import type { ReactNode } from "react";

export { Time } from "./relative-time";

/** Presentational pieces shared by the pages (server-safe: no hooks, no state). */

const STATE_TONE: Record<string, string> = {
  Pending: "bg-stone-100 text-stone-700 ring-stone-300",
  Waiting: "bg-amber-50 text-amber-800 ring-amber-300",
  Queued: "bg-sky-50 text-sky-800 ring-sky-300",
  Running: "bg-blue-50 text-blue-800 ring-blue-300",
  Reviewing: "bg-amber-50 text-amber-900 ring-amber-400",
  Succeeded: "bg-emerald-50 text-emerald-800 ring-emerald-300",
  Failed: "bg-red-50 text-red-800 ring-red-300",
  Canceled: "bg-stone-100 text-stone-500 ring-stone-300",
};

export function StateBadge({ state, testId }: { state: string; testId?: string }) {
  return (
    <span
      data-testid={testId}
      data-state={state}
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${STATE_TONE[state] ?? STATE_TONE.Pending}`}
    >
      {state}
    </span>
  );
}

export function Label({ name }: { name: string }) {
  return <span className="inline-block max-w-full truncate rounded bg-stone-100 px-1.5 py-0.5 text-[11px] text-stone-600">{name}</span>;
}

export function PageHeader({ title, subtitle, children }: { title: string; subtitle?: ReactNode; children?: ReactNode }) {
  return (
    <div className="mb-4 flex flex-wrap items-end justify-between gap-3">
      <div>
        <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
        {subtitle ? <p className="mt-0.5 text-sm text-stone-600">{subtitle}</p> : null}
      </div>
      {children}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div data-testid="empty" className="rounded-lg border border-dashed border-stone-300 bg-white p-8 text-center">
      <p className="font-medium text-stone-700">{title}</p>
      {children ? <div className="mt-1 text-sm text-stone-500">{children}</div> : null}
    </div>
  );
}

export function Problem({ title, message, token }: { title: string; message: string; token?: string }) {
  return (
    <div role="alert" data-testid="problem" className="rounded-lg border border-red-200 bg-red-50 p-4 text-sm text-red-900">
      <p className="font-semibold">{title}</p>
      <p className="mt-1">{message}</p>
      {token ? <p className="mt-1 font-mono text-xs text-red-700">{token}</p> : null}
    </div>
  );
}

export function ExternalLink({ href, children, className, testId }: { href: string; children: ReactNode; className?: string; testId?: string }) {
  return (
    <a href={href} target="_blank" rel="noreferrer" data-testid={testId} className={className ?? "text-emerald-700 underline decoration-emerald-300 hover:decoration-emerald-700"}>
      {children}
    </a>
  );
}
