import type { Metadata } from "next";
import { listApiTokens } from "../../../lib/auth/api-tokens";
import { ApiTokensPanel } from "../../_components/api-tokens-panel";
import { PageHeader, Problem } from "../../_components/ui";
import { db } from "../../_server/db";
import { load } from "../../_server/page-data";
import { requirePageViewer } from "../../_server/viewer";

export const metadata: Metadata = { title: "API tokens" };

export default async function TokensPage() {
  const viewer = await requirePageViewer("/tokens");
  const result = await load(() => listApiTokens(db(), viewer.id));
  return (
    <>
      <PageHeader title="API tokens" subtitle="Personal tokens for the JSON API (Authorization: Bearer): read may only read, act may also act. Each acts as you, with your GitHub access." />
      {result.ok ? (
        <ApiTokensPanel
          tokens={result.data.map((t) => ({
            id: t.id,
            name: t.name,
            scope: t.scope,
            expiresAt: t.expiresAt.toISOString(),
            lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
            revokedAt: t.revokedAt?.toISOString() ?? null,
          }))}
        />
      ) : (
        <Problem title="The tokens could not be read" message={result.message} token={result.token} />
      )}
    </>
  );
}
