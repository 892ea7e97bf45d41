-- Personal API tokens: a person's bearer credential for the JSON API, with a scope (read or act)
-- and an expiry. Only the SHA-256 of the token is kept (the token is shown once). A revoked or
-- expired token is refused. The lookup is by hash.
CREATE TABLE "api_tokens" (
  "id"           TEXT PRIMARY KEY,
  "user_id"      TEXT NOT NULL REFERENCES "users" ("id") ON DELETE CASCADE,
  "name"         TEXT NOT NULL,
  "scope"        TEXT NOT NULL CHECK ("scope" IN ('read', 'act')),
  "token_hash"   TEXT NOT NULL UNIQUE,
  "created_at"   TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "expires_at"   TIMESTAMPTZ(3) NOT NULL,
  "last_used_at" TIMESTAMPTZ(3),
  "revoked_at"   TIMESTAMPTZ(3)
);
CREATE INDEX "api_tokens_user_id" ON "api_tokens" ("user_id");
