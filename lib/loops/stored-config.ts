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
  /**
   * The blob ids of its config files as the change probe saw them before this read (absent when
   * no probe asked for the read): a probe that sees others makes the repository read it again.
   */
  probeMark?: string;
}
