import type { Metadata } from "next";
import { getBudgets } from "../../../lib/dashboard/queries";
import { ActionButton } from "../../_components/action-button";
import { Empty, PageHeader, Problem, Time } from "../../_components/ui";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Budgets" };

export default async function BudgetsPage() {
  const viewer = await requirePageViewer("/budgets");
  const result = await load(() => getBudgets(dashboardContext(), viewer));
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Budgets" />
        <Problem title="The cycle budgets could not be read" message={result.message} token={result.token} />
      </>
    );
  }
  const { budgets, writable } = result.data;
  const canWrite = new Set(writable);
  return (
    <>
      <PageHeader
        title="Cycle budgets"
        subtitle="How many Runs each Loop may open on an Item between resets (its max_cycles). An Item that used its budget waits here until someone resets it."
      />
      {budgets.length === 0 ? (
        <Empty title="No Item has a cycle budget yet">An Item gets one when a Loop with max_cycles first opens a Run on it.</Empty>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-stone-200 bg-white">
          <table data-testid="budgets" className="w-full min-w-[36rem] text-left text-sm">
            <thead className="border-b border-stone-200 text-xs text-stone-500">
              <tr>
                <th className="px-3 py-2 font-medium">Item</th>
                <th className="px-3 py-2 font-medium">Loop</th>
                <th className="px-3 py-2 font-medium" title="how many times the budget was reset">
                  Cycle
                </th>
                <th className="px-3 py-2 font-medium">Runs opened in this cycle</th>
                <th className="px-3 py-2 font-medium">Status</th>
                <th className="px-3 py-2" />
              </tr>
            </thead>
            <tbody className="divide-y divide-stone-100">
              {budgets.map((b) => (
                <tr key={`${b.itemKey}\u0000${b.loop}`} data-testid="budget" data-item={`${b.repo}#${b.number ?? ""}`} data-loop={b.loop ?? ""} data-ask={b.ask ? "yes" : "no"}>
                  <td className="px-3 py-2">
                    <span className="font-medium">{b.title ?? b.itemKey}</span>
                    <span className="block text-xs text-stone-500">
                      {b.repo}
                      {b.number ? `#${b.number}` : ""}
                    </span>
                  </td>
                  <td className="px-3 py-2">{b.loop ?? "—"}</td>
                  <td className="px-3 py-2">{b.generation}</td>
                  <td className="px-3 py-2" data-testid="budget-use">
                    {b.maxCycles !== null ? `${b.used} of ${b.maxCycles}` : b.used}
                  </td>
                  <td className="px-3 py-2 text-xs">
                    {b.ask ? (
                      <span className="rounded bg-orange-100 px-1.5 py-0.5 font-medium text-orange-900">
                        used up{b.ask.loop ? ` (${b.ask.loop})` : ""} · <Time iso={b.askedAt} />
                      </span>
                    ) : b.resetAt ? (
                      <span className="text-stone-500">
                        reset by {b.resetBy} <Time iso={b.resetAt} />
                      </span>
                    ) : (
                      <span className="text-stone-500">within budget</span>
                    )}
                  </td>
                  <td className="px-3 py-2 text-right">
                    {b.ask && canWrite.has(b.repo) ? (
                      <ActionButton url="/api/v1/budgets/reset" body={{ itemKey: b.itemKey }} label="Reset" tone="primary" testId="budget-reset" />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
