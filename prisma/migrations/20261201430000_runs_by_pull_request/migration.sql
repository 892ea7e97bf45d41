-- The Board finds the Run that opened a pull request (its card is the Item's, not its own)
CREATE INDEX "runs_repo_pull_request_number_idx" ON "runs"("repo", "pull_request_number");
