import type { Metadata } from "next";
import { snapshotsOfRepositories, type SnapshotView } from "../../../lib/dashboard/environment-snapshots";
import { getInstallations } from "../../../lib/dashboard/queries";
import { repositoryUrl } from "../../../lib/dashboard/links";
import { ActionButton } from "../../_components/action-button";
import { Empty, ExternalLink, PageHeader, Problem, Time } from "../../_components/ui";
import { load } from "../../_server/page-data";
import { dashboardContext } from "../../_server/services";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "Repositories" };

const megabytes = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MB`;

/** A repository's environment snapshots: size, key, age and hits, each with Rebuild. */
function Snapshots({ repo, snapshots }: { repo: string; snapshots: readonly SnapshotView[] }) {
  return (
    <ul className="w-full space-y-1 text-xs text-stone-600" data-testid="environment-snapshots">
      {snapshots.map((s) => (
        <li key={s.key} data-testid="environment-snapshot" className="flex flex-wrap items-center gap-x-2">
          <span>Environment snapshot</span>
          <code title={s.key}>{s.key.slice(0, 12)}</code>
          <span>
            · {megabytes(s.bytes)} · {s.files.toLocaleString("en-US")} files · {s.hits} hit{s.hits === 1 ? "" : "s"} · made <Time iso={s.createdAt} /> · used <Time iso={s.lastUsedAt} />
          </span>
          <ActionButton
            url="/api/v1/repositories/environment/rebuild"
            body={{ repo, key: s.key }}
            label="Rebuild"
            confirm="Remove this snapshot? The next trusted Attempt runs setup and keeps a new one."
            testId="environment-rebuild"
          />
        </li>
      ))}
    </ul>
  );
}

export default async function RepositoriesPage() {
  const viewer = await requirePageViewer("/repositories");
  const result = await load(async () => {
    const { installations } = await getInstallations(dashboardContext(), viewer);
    const registered = installations.flatMap((i) => i.repositories.filter((r) => r.registered).map((r) => r.fullName));
    return { installations, snapshots: await snapshotsOfRepositories(dashboardContext(), registered) };
  });
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Repositories" />
        <Problem title="GitHub could not be asked what you can see" message={result.message} token={result.token} />
      </>
    );
  }
  const { installations, snapshots } = result.data;
  return (
    <>
      <PageHeader
        title="Repositories"
        subtitle={viewer.admin ? "Every installation of the App (you are an instance admin)." : "The App's installations and repositories you can see on GitHub."}
      />
      {installations.length === 0 ? (
        <Empty title="No installation you can see">Install the GitHub App on an account or organization, then come back.</Empty>
      ) : (
        <div className="space-y-4">
          {installations.map((i) => (
            <section key={i.id} data-testid="installation" className="rounded-lg border border-stone-200 bg-white">
              <h2 className="flex flex-wrap items-center gap-2 border-b border-stone-200 px-3 py-2 text-sm font-semibold">
                {i.account}
                <span className="font-normal text-stone-500">{i.accountType}</span>
                {i.suspended ? <span className="rounded bg-red-100 px-1.5 text-xs text-red-800">suspended</span> : null}
              </h2>
              {i.repositories.length === 0 ? (
                <p className="px-3 py-3 text-sm text-stone-500">No repository in this installation.</p>
              ) : (
                <ul className="divide-y divide-stone-100 text-sm">
                  {i.repositories.map((r) => (
                    <li key={r.fullName} data-testid="repository" className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2">
                      <ExternalLink href={repositoryUrl(r.fullName)}>{r.fullName}</ExternalLink>
                      {r.private ? <span className="rounded bg-stone-100 px-1.5 text-xs text-stone-600">private</span> : null}
                      {r.registered ? (
                        <span className="text-xs text-stone-500">
                          {r.loops} Loop{r.loops === 1 ? "" : "s"} · polled <Time iso={r.lastPolledAt} />
                        </span>
                      ) : (
                        <span className="text-xs text-stone-500">not registered yet</span>
                      )}
                      {r.configError ? <span className="w-full text-xs text-fuchsia-800">Config: {r.configError}</span> : null}
                      {r.pollError ? <span className="w-full text-xs text-sky-800">Polling: {r.pollError}</span> : null}
                      {snapshots.get(r.fullName.toLowerCase())?.length ? <Snapshots repo={r.fullName} snapshots={snapshots.get(r.fullName.toLowerCase())!} /> : null}
                    </li>
                  ))}
                </ul>
              )}
            </section>
          ))}
        </div>
      )}
    </>
  );
}
