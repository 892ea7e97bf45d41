import type { LabelSpec, LoopConfigError, LoopDefinition } from "./config-schema";

/** A repository's `.github/atelier.yml` as last read: its labels, valid Loops and errors. */
export interface StoredConfig {
  readAt: string;
  labels: LabelSpec[];
  loops: LoopDefinition[];
  /** `dashboard_issue: true` (absent in a config stored before it existed) */
  dashboardIssue?: boolean;
  errors: LoopConfigError[];
  /** Where it came from: the repository's file, the owner's `.github` repository, `_extends`. */
  files: string[];
}
