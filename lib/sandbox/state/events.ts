import type { PushedCommit } from "../git-repos";
import type { SimLabel } from "../model";

/**
 * What happened in the simulated GitHub, in GitHub's webhook vocabulary. The webhook module
 * renders each into a payload at the moment it happens.
 */
export type IssueChanges = { title?: { from: string }; body?: { from: string | null }; base?: { ref: { from: string }; sha: { from: string } } };

export type SimEvent =
  | {
      event: "issues";
      action: "opened" | "edited" | "closed" | "reopened" | "labeled" | "unlabeled";
      repoId: number;
      number: number;
      senderId: number;
      label?: SimLabel;
      changes?: IssueChanges;
    }
  | {
      event: "pull_request";
      action:
        | "opened"
        | "edited"
        | "synchronize"
        | "closed"
        | "reopened"
        | "labeled"
        | "unlabeled"
        | "ready_for_review"
        | "converted_to_draft";
      repoId: number;
      number: number;
      senderId: number;
      label?: SimLabel;
      changes?: IssueChanges;
      before?: string;
      after?: string;
    }
  | {
      event: "label";
      action: "created" | "edited" | "deleted";
      repoId: number;
      label: SimLabel;
      senderId: number;
      changes?: { name?: { from: string }; color?: { from: string }; description?: { from: string | null } };
    }
  | {
      /** A branch moved: a commit of the control API, a merge, or git push (GitHub's push has no action: "" here). */
      event: "push";
      action: "";
      repoId: number;
      senderId: number;
      ref: string;
      before: string;
      after: string;
      forced: boolean;
      commits: PushedCommit[];
    }
  | { event: "issue_comment"; action: "created" | "edited"; repoId: number; number: number; commentId: number; senderId: number; changes?: { body: { from: string } } }
  | { event: "pull_request_review"; action: "submitted"; repoId: number; number: number; reviewId: number; senderId: number }
  | { event: "pull_request_review_comment"; action: "created"; repoId: number; number: number; commentId: number; senderId: number }
  | {
      event: "check_run";
      action: "created" | "completed" | "rerequested" | "requested_action";
      repoId: number;
      checkRunId: number;
      senderId: number;
      identifier?: string;
    }
  | { event: "check_suite"; action: "completed" | "requested" | "rerequested"; repoId: number; checkSuiteId: number; senderId: number }
  /** GitHub's status payload carries no action: "" here. */
  | { event: "status"; action: ""; repoId: number; statusId: number; senderId: number }
  | { event: "pull_request_review_thread"; action: "resolved" | "unresolved"; repoId: number; number: number; threadId: number; senderId: number }
  | { event: "installation"; action: "created" | "deleted" | "suspend" | "unsuspend"; installationId: number; senderId: number }
  | { event: "repository"; action: "renamed"; repoId: number; senderId: number; changes: { repository: { name: { from: string } } } }
  | { event: "repository"; action: "transferred"; repoId: number; senderId: number; fromOwnerId: number }
  | { event: "repository"; action: "deleted"; repoId: number; senderId: number }
  | {
      event: "installation_repositories";
      action: "added" | "removed";
      installationId: number;
      senderId: number;
      added: number[];
      removed: number[];
    };

export type SimEventListener = (event: SimEvent) => void;
