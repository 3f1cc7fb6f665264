/**
 * The registry of replay switches, empty on purpose (style §18; sdk-typescript
 * `packages/workflow/src/flags.ts`).
 *
 * Upgrades go by Worker Versioning (docs/deployment.md, "Upgrades with Worker Versioning"): a
 * conversation's run is pinned to the build it started on, the old build keeps serving its runs
 * until they end or continue as new (onto the current build), so a change to the workflow code
 * needs no switch: new code never replays a history old code wrote.
 *
 * A patch is only for a HOTFIX to code that running pinned conversations execute: a fix that must
 * reach runs already pinned to a build before their next continue-as-new, so their histories
 * replay on the fixed code (a versioning override onto the fixed build). Register it here —
 * its id, what the patched branch changes and since when — and branch on `patched(PATCHES.<name>)`;
 * never call Temporal's `patched()` / `deprecatePatch()` yourself or with a literal id
 * (test/unit/patches.test.ts fails otherwise, and on an entry nobody uses). Remove the entry and
 * its old branch once no run pinned to a build without the fix is left.
 *
 * Where to ask it: not first right after a local activity's result (a model call's, a Read's).
 * sdk-core (@temporalio/worker 1.23.0, 1.24.0) can close a workflow task with a local activity's
 * marker before the workflow saw its result; on replay the result comes one task earlier, before
 * that task's patch markers, and the switch answers `false` where it answered `true` live
 * (docs/architecture.md, "Replay switches").
 */
import { deprecatePatch as temporalDeprecatePatch, patched as temporalPatched } from '@temporalio/workflow';

/** One replay switch: the id its marker records, what the patched branch changed, and since when. */
export interface Patch {
  readonly id: string;
  readonly note: string;
  /** Date and commit that introduced it (`git log -S '<id>'`). */
  readonly since: string;
}

/** Every hotfix switch, `name: { id, note, since }`. Empty: upgrades go by Worker Versioning. */
export const PATCHES = {} as const satisfies Record<string, Patch>;

export type PatchName = keyof typeof PATCHES;

/** Whether this run takes the patched branch (Temporal's `patched()` for a registered switch). */
export function patched(patch: Patch): boolean {
  return temporalPatched(patch.id);
}

/** A retired switch: the new branch always runs, and histories with the marker still replay. */
export function deprecatePatch(patch: Patch): void {
  temporalDeprecatePatch(patch.id);
}
