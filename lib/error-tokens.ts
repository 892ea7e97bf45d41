/**
 * Every stable token a refusal carries, with the one HTTP status it is answered with. The
 * token is a closed type: a typo in a throw does not compile, each error class takes only the
 * tokens of its status (`TokenOf<404>` for NotFoundError), and `toHttpError` answers with the
 * status written here. docs/openapi.yaml lists the same tokens (test/api/error-tokens.test.ts).
 */
export const ERROR_STATUS = {
  // 400: bad input
  amendment_empty: 400,
  app_name_too_long: 400,
  config_bad_cron: 400,
  config_bad_expression: 400,
  config_bad_timezone: 400,
  expression_evaluation_failed: 400,
  github_api_url_invalid: 400,
  github_app_id_invalid: 400,
  github_app_not_configured: 400,
  github_private_key_invalid: 400,
  github_private_key_missing: 400,
  github_private_key_unreadable: 400,
  github_sandbox_file_unreadable: 400,
  github_url_insecure: 400,
  github_url_invalid: 400,
  github_url_private: 400,
  github_url_unresolvable: 400,
  github_webhook_secret_missing: 400,
  instance_config_invalid: 400,
  instance_config_missing: 400,
  intervene_not_allowed: 400,
  intervention_empty: 400,
  intervention_too_long: 400,
  invalid_body: 400,
  invalid_cursor: 400,
  invalid_form: 400,
  invalid_id: 400,
  invalid_json: 400,
  invalid_path: 400,
  invalid_query: 400,
  invalid_repository: 400,
  lane_not_movable: 400,
  loop_continues_own_pull_requests: 400,
  loop_not_dispatchable: 400,
  loop_not_schedule: 400,
  loop_wrong_kind: 400,
  manifest_code_invalid: 400,
  organization_invalid: 400,
  projection_needs_pull_request: 400,
  prompt_empty: 400,
  public_url_invalid: 400,
  redis_prefix_invalid: 400,
  repository_name_invalid: 400,
  setup_state_mismatch: 400,
  unknown_agent: 400,
  unknown_lane: 400,
  unsupported_content_type: 400,
  webhook_body_invalid: 400,
  webhook_headers_invalid: 400,
  webhook_headers_missing: 400,
  webhook_target_private: 400,
  webhook_target_unresolvable: 400,
  webhook_url_invalid: 400,
  // 401: signed out, or a credential is wrong
  github_app_auth_failed: 401,
  github_token_invalid: 401,
  github_token_missing: 401,
  invalid_api_token: 401,
  metrics_unauthorized: 401,
  signed_out: 401,
  webhook_signature_invalid: 401,
  // 402: a monthly quota or cost cap
  monthly_cost_cap_exceeded: 402,
  monthly_run_quota_exceeded: 402,
  repo_quota_exceeded: 402,
  // 403: not allowed here
  admin_only: 403,
  agent_not_allowed: 403,
  cross_origin_request: 403,
  installation_missing: 403,
  installation_suspended: 403,
  permission_denied: 403,
  repo_admin_only: 403,
  session_required: 403,
  setup_token_required: 403,
  token_scope_insufficient: 403,
  // 404: no such thing
  api_token_not_found: 404,
  budget_not_found: 404,
  environment_snapshot_not_found: 404,
  delivery_not_found: 404,
  installation_not_found: 404,
  installation_token_refused: 404,
  item_not_found: 404,
  loop_not_found: 404,
  not_found: 404,
  repository_not_found: 404,
  repository_not_polled: 404,
  run_not_found: 404,
  webhook_not_found: 404,
  // 409: not in a state that allows it
  admission_changed: 409,
  agent_not_reachable: 409,
  agent_not_running: 409,
  app_already_registered: 409,
  attempt_not_live: 409,
  attempt_open: 409,
  cycle_budget_exhausted: 409,
  ignored_event: 409,
  item_closed: 409,
  lease_lost: 409,
  no_budget_ask: 409,
  old_generation: 409,
  open_run_exists: 409,
  run_state_conflict: 409,
  setup_unavailable_in_sandbox: 409,
  // 413: a body too large
  body_too_large: 413,
  webhook_too_large: 413,
  // 429: too many, too fast
  concurrency_cap_exceeded: 429,
  github_rate_limited: 429,
  rate_limited: 429,
  // 500: Atelier itself
  internal: 500,
  secret_key_mismatch: 500,
  // 502: GitHub answered badly or not at all
  github_refused: 502,
  github_request_failed: 502,
  github_unavailable: 502,
  github_unreachable: 502,
  manifest_conversion_incomplete: 502,
  // 503: a dependency is unreachable, or this worker drains
  database_unavailable: 503,
  queue_unavailable: 503,
  worker_draining: 503,
} as const satisfies Record<string, number>;

/** A stable error token (the `error` of every refusal body). */
export type ErrorToken = keyof typeof ERROR_STATUS;

/** An HTTP status some refusal is answered with. */
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorToken];

/** The tokens answered with status `S`. */
export type TokenOf<S extends ErrorStatus> = { [T in ErrorToken]: (typeof ERROR_STATUS)[T] extends S ? T : never }[ErrorToken];
