import { buildSchema } from "graphql";

/** The fields an Issue and a PullRequest share (on GitHub, those of the interfaces both implement). */
const ITEM_FIELDS = `
    id: ID!
    databaseId: Int
    number: Int!
    title: String!
    body: String!
    closed: Boolean!
    author: Actor
    editor: Actor
    lastEditedAt: DateTime
    authorAssociation: CommentAuthorAssociation!
    labels(first: Int, last: Int, after: String, before: String): LabelConnection
    comments(first: Int, last: Int, after: String, before: String): IssueCommentConnection!
    createdAt: DateTime!
    updatedAt: DateTime!
    closedAt: DateTime
    url: URI!
    resourcePath: URI!
    repository: Repository!`;

/** The subset of GitHub's GraphQL schema the simulator answers. */
export const schema = buildSchema(/* GraphQL */ `
  scalar DateTime
  scalar URI
  scalar GitObjectID

  enum IssueState { OPEN CLOSED }
  enum IssueStateReason { COMPLETED NOT_PLANNED REOPENED DUPLICATE }
  enum PullRequestState { OPEN CLOSED MERGED }
  enum MergeableState { MERGEABLE CONFLICTING UNKNOWN }
  enum CommentAuthorAssociation { MEMBER OWNER MANNEQUIN COLLABORATOR CONTRIBUTOR FIRST_TIME_CONTRIBUTOR FIRST_TIMER NONE }

  interface Actor { login: String! avatarUrl: URI! url: URI! resourcePath: URI! }
  interface RepositoryOwner { id: ID! login: String! url: URI! }
  type User implements Actor & RepositoryOwner { id: ID! databaseId: Int login: String! name: String avatarUrl: URI! url: URI! resourcePath: URI! }
  type Bot implements Actor { id: ID! databaseId: Int login: String! avatarUrl: URI! url: URI! resourcePath: URI! }
  type Organization implements Actor & RepositoryOwner { id: ID! databaseId: Int login: String! name: String avatarUrl: URI! url: URI! resourcePath: URI! }

  type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
  type Label { id: ID! name: String! color: String! description: String isDefault: Boolean! }
  type LabelConnection { nodes: [Label] totalCount: Int! pageInfo: PageInfo! }
  type IssueCommentConnection { totalCount: Int! }

  type LabeledEvent { id: ID! actor: Actor createdAt: DateTime! label: Label! }
  type UnlabeledEvent { id: ID! actor: Actor createdAt: DateTime! label: Label! }
  type RenamedTitleEvent { id: ID! actor: Actor createdAt: DateTime! previousTitle: String! currentTitle: String! }
  type ClosedEvent { id: ID! actor: Actor createdAt: DateTime! }
  type ReopenedEvent { id: ID! actor: Actor createdAt: DateTime! }
  type ReadyForReviewEvent { id: ID! actor: Actor createdAt: DateTime! }
  type ConvertToDraftEvent { id: ID! actor: Actor createdAt: DateTime! }
  "The item types of the events the simulator records (GitHub's enums have many more)."
  enum IssueTimelineItemsItemType { LABELED_EVENT UNLABELED_EVENT RENAMED_TITLE_EVENT CLOSED_EVENT REOPENED_EVENT }
  enum PullRequestTimelineItemsItemType { LABELED_EVENT UNLABELED_EVENT RENAMED_TITLE_EVENT CLOSED_EVENT REOPENED_EVENT READY_FOR_REVIEW_EVENT CONVERT_TO_DRAFT_EVENT }
  union IssueTimelineItems = LabeledEvent | UnlabeledEvent | RenamedTitleEvent | ClosedEvent | ReopenedEvent
  union PullRequestTimelineItems = LabeledEvent | UnlabeledEvent | RenamedTitleEvent | ClosedEvent | ReopenedEvent | ReadyForReviewEvent | ConvertToDraftEvent
  type IssueTimelineItemsConnection { nodes: [IssueTimelineItems] totalCount: Int! filteredCount: Int! pageInfo: PageInfo! }
  type PullRequestTimelineItemsConnection { nodes: [PullRequestTimelineItems] totalCount: Int! filteredCount: Int! pageInfo: PageInfo! }

  type Issue {${ITEM_FIELDS}
    state: IssueState!
    stateReason: IssueStateReason
    timelineItems(first: Int, last: Int, after: String, before: String, since: DateTime, itemTypes: [IssueTimelineItemsItemType!]): IssueTimelineItemsConnection!
  }

  type PullRequest {${ITEM_FIELDS}
    state: PullRequestState!
    timelineItems(first: Int, last: Int, after: String, before: String, since: DateTime, itemTypes: [PullRequestTimelineItemsItemType!]): PullRequestTimelineItemsConnection!
    isDraft: Boolean!
    headRefName: String!
    headRefOid: GitObjectID!
    baseRefName: String!
    baseRefOid: GitObjectID!
    mergeable: MergeableState!
    merged: Boolean!
    mergedAt: DateTime
    reviews(first: Int, last: Int, after: String, before: String): PullRequestReviewConnection
    reviewThreads(first: Int, last: Int, after: String, before: String): PullRequestReviewThreadConnection!
    "Only the head commit: the simulator keeps no pull request's commit list."
    commits(first: Int, last: Int, after: String, before: String): PullRequestCommitConnection!
    headRef: Ref
    reviewDecision: PullRequestReviewDecision
  }

  enum PullRequestReviewDecision { CHANGES_REQUESTED APPROVED REVIEW_REQUIRED }
  interface GitObject { id: ID! oid: GitObjectID! }
  type Blob implements GitObject { id: ID! oid: GitObjectID! byteSize: Int! }
  type Ref { id: ID! name: String! prefix: String! target: GitObject }
  type StatusCheckRollup { id: ID! state: StatusState! }

  enum PullRequestReviewState { PENDING COMMENTED APPROVED CHANGES_REQUESTED DISMISSED }
  type PullRequestReview { id: ID! databaseId: Int author: Actor body: String! state: PullRequestReviewState! submittedAt: DateTime url: URI! commit: Commit }
  type PullRequestReviewConnection { nodes: [PullRequestReview] totalCount: Int! pageInfo: PageInfo! }
  type PullRequestReviewComment { id: ID! databaseId: Int author: Actor body: String! path: String! line: Int createdAt: DateTime! url: URI! }
  type PullRequestReviewCommentConnection { nodes: [PullRequestReviewComment] totalCount: Int! pageInfo: PageInfo! }
  type PullRequestReviewThread {
    id: ID!
    isResolved: Boolean!
    isOutdated: Boolean!
    path: String!
    line: Int
    resolvedBy: User
    comments(first: Int, last: Int, after: String, before: String): PullRequestReviewCommentConnection!
  }
  type PullRequestReviewThreadConnection { nodes: [PullRequestReviewThread] totalCount: Int! pageInfo: PageInfo! }

  enum CheckStatusState { QUEUED IN_PROGRESS COMPLETED WAITING PENDING REQUESTED }
  enum CheckConclusionState { ACTION_REQUIRED TIMED_OUT CANCELLED FAILURE SUCCESS NEUTRAL SKIPPED STARTUP_FAILURE STALE }
  type App { id: ID! databaseId: Int slug: String! name: String! }
  type CheckRun {
    id: ID!
    databaseId: Int
    name: String!
    status: CheckStatusState!
    conclusion: CheckConclusionState
    title: String
    summary: String
    text: String
    detailsUrl: URI
    startedAt: DateTime
    completedAt: DateTime
  }
  type CheckRunConnection { nodes: [CheckRun] totalCount: Int! pageInfo: PageInfo! }
  type CheckSuite {
    id: ID!
    databaseId: Int
    app: App
    status: CheckStatusState!
    conclusion: CheckConclusionState
    checkRuns(first: Int, last: Int, after: String, before: String): CheckRunConnection
  }
  type CheckSuiteConnection { nodes: [CheckSuite] totalCount: Int! pageInfo: PageInfo! }
  enum StatusState { ERROR EXPECTED FAILURE PENDING SUCCESS }
  type StatusContext { id: ID! context: String! state: StatusState! description: String targetUrl: URI createdAt: DateTime! }
  type Status { id: ID! state: StatusState! contexts: [StatusContext!]! }
  type Commit implements GitObject {
    id: ID!
    oid: GitObjectID!
    checkSuites(first: Int, last: Int, after: String, before: String): CheckSuiteConnection
    status: Status
    "The worst of the commit's latest check runs (every App's) and commit statuses; null when it has none."
    statusCheckRollup: StatusCheckRollup
  }
  type PullRequestCommit { id: ID! commit: Commit! }
  type PullRequestCommitConnection { nodes: [PullRequestCommit] totalCount: Int! pageInfo: PageInfo! }

  union IssueOrPullRequest = Issue | PullRequest

  enum OrderDirection { ASC DESC }
  enum IssueOrderField { CREATED_AT UPDATED_AT }
  input IssueOrder { field: IssueOrderField! direction: OrderDirection! }
  type IssueConnection { nodes: [Issue] totalCount: Int! pageInfo: PageInfo! }
  type PullRequestConnection { nodes: [PullRequest] totalCount: Int! pageInfo: PageInfo! }

  enum RepositoryPermission { ADMIN MAINTAIN WRITE TRIAGE READ }
  enum DefaultRepositoryPermissionField { NONE READ WRITE ADMIN }
  enum CollaboratorAffiliation { OUTSIDE DIRECT ALL }
  "The simulator names no source (GitHub's is the Organization, Repository or Team that granted it)."
  type PermissionSource { permission: DefaultRepositoryPermissionField! roleName: String }
  type RepositoryCollaboratorEdge { cursor: String! permission: RepositoryPermission! permissionSources: [PermissionSource!] node: User! }
  type RepositoryCollaboratorConnection { edges: [RepositoryCollaboratorEdge] nodes: [User] totalCount: Int! pageInfo: PageInfo! }

  type Repository {
    id: ID!
    databaseId: Int
    name: String!
    nameWithOwner: String!
    owner: RepositoryOwner!
    url: URI!
    isPrivate: Boolean!
    issue(number: Int!): Issue
    pullRequest(number: Int!): PullRequest
    issueOrPullRequest(number: Int!): IssueOrPullRequest
    issues(first: Int, last: Int, after: String, before: String, orderBy: IssueOrder, states: [IssueState!]): IssueConnection!
    pullRequests(first: Int, last: Int, after: String, before: String, orderBy: IssueOrder, states: [PullRequestState!]): PullRequestConnection!
    collaborators(first: Int, last: Int, after: String, before: String, query: String, affiliation: CollaboratorAffiliation): RepositoryCollaboratorConnection
    "A git object by \`rev:path\` (a blob) or \`rev\` (a commit); null when it does not exist."
    object(expression: String, oid: GitObjectID): GitObject
  }

  type RateLimit { cost: Int! limit: Int! nodeCount: Int! remaining: Int! resetAt: DateTime! used: Int! }

  type Query {
    repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
    rateLimit(dryRun: Boolean = false): RateLimit
    viewer: User!
  }

  input ConvertPullRequestToDraftInput { pullRequestId: ID! clientMutationId: String }
  type ConvertPullRequestToDraftPayload { clientMutationId: String pullRequest: PullRequest }
  input MarkPullRequestReadyForReviewInput { pullRequestId: ID! clientMutationId: String }
  type MarkPullRequestReadyForReviewPayload { clientMutationId: String pullRequest: PullRequest }

  type Mutation {
    convertPullRequestToDraft(input: ConvertPullRequestToDraftInput!): ConvertPullRequestToDraftPayload
    markPullRequestReadyForReview(input: MarkPullRequestReadyForReviewInput!): MarkPullRequestReadyForReviewPayload
  }
`);
