-- Sessions are kept as the SHA-256 (hex) of the token the browser holds: the rows stored
-- before are hashed here, so every open session keeps working and a dump opens none.
-- The App's credentials in app_credentials are sealed by the application on their first read
-- (the key lives outside the database), see lib/github/app-settings.ts.
UPDATE "sessions" SET "session_token" = encode(sha256(convert_to("session_token", 'UTF8')), 'hex');

-- The one-time setup token the web process prints at start: only its SHA-256 is kept.
CREATE TABLE "setup_token" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "setup_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "setup_token_one_row" CHECK ("id" = 1)
);
