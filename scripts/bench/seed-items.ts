/**
 * SQL: the columns of the benchmarks' Item number `i` (an expression) after its key, repo and
 * number — kind, state, title, labels, projection, content hash, updated — one in nine a pull
 * request, 30 % closed, labels cycling through the lanes.
 */
export const itemColumnsSql = (i: string): string => `
            CASE WHEN ${i} % 9 = 0 THEN 'pull_request' ELSE 'issue' END,
            CASE WHEN ${i} % 10 < 3 THEN 'closed' ELSE 'open' END,
            'Item ' || ${i},
            CASE ${i} % 5 WHEN 1 THEN ARRAY['ready-for-agent'] WHEN 2 THEN ARRAY['agent-working', 'bug']
                       WHEN 3 THEN ARRAY['in-review'] WHEN 4 THEN ARRAY['docs'] ELSE ARRAY[]::text[] END,
            '{}', md5(${i}::text), now() - (${i} || ' minutes')::interval`;
