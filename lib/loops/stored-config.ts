import type { LabelSpec, LoopConfigError, LoopDefinition } from "./config-schema";

/** A repository's `.github/atelier.yml` as last read: its labels, valid Loops and errors. */
export interface StoredConfig {
  readAt: string;
  labels: LabelSpec[];
  loops: LoopDefinition[];
  errors: LoopConfigError[];
  /** Where it came from: the repository's file, the owner's `.github` repository, `_extends`. */
  files: string[];
}
