/**
 * How a conversation shows in the Temporal UI and in list filters: its current details and its
 * search attributes. Current details cost nothing (they are answered from memory by the metadata
 * query); every search-attribute upsert is a history event and a visibility write, so they are
 * upserted only when the coarse status a person filters on changes — at query start, at query
 * end and when the conversation ends — never per loop iteration (issue 7: before, 2 of ~9.4
 * events per iteration were upserts). Histories recorded before keep their per-phase upserts
 * (`patched(PATCHES.temporalUiSummaries)`).
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  MODEL_SEARCH_ATTRIBUTE,
  SEARCH_ATTRIBUTES,
  STATUS_SEARCH_ATTRIBUTE,
  type SearchStatus,
  progressSearchAttributes,
  searchStatusOf,
  sqlSafeSearchAttributes,
} from '../common/search-attributes';
import { type CurrentDetailsInput, formatCurrentDetails } from './ui-details';
import { PATCHES, patched } from './patches';

/** `pairs` as this run upserts or starts a child with them: {@link sqlSafeSearchAttributes} unless replaying an older history. */
export function sqlSafe<P extends Parameters<typeof sqlSafeSearchAttributes>[0][number]>(pairs: P[]): P[] {
  return patched(PATCHES.sqlSafeSearchAttributes) ? sqlSafeSearchAttributes(pairs) : pairs;
}

/** Whether this run takes the UI changes: false while replaying a history recorded before them. */
export function uiPatched(): boolean {
  return patched(PATCHES.temporalUiSummaries);
}

export class ConversationVisibility {
  /** Attributes this run was started with (the client sets only those the server has registered). */
  private readonly present: ReadonlySet<string>;
  private lastStatus: string | undefined;

  constructor() {
    const attributes = workflowInfo().typedSearchAttributes;
    this.present = new Set(SEARCH_ATTRIBUTES.filter((key) => attributes.get(key) !== undefined).map((key) => key.name));
    this.lastStatus = attributes.get(STATUS_SEARCH_ATTRIBUTE);
  }

  /** The current details card. */
  showDetails(details: CurrentDetailsInput): void {
    setCurrentDetails(formatCurrentDetails(details));
  }

  /**
   * A phase change: upserts the search attributes when the coarse status changed (or, in a
   * history from before, on every phase change, as it was recorded).
   */
  onPhase(phase: string, values: { model: string; turns: number; costUsd: number }): void {
    if (!this.present.has(STATUS_SEARCH_ATTRIBUTE.name)) return;
    if (!uiPatched()) {
      upsertSearchAttributes([
        { key: STATUS_SEARCH_ATTRIBUTE, value: phase },
        { key: MODEL_SEARCH_ATTRIBUTE, value: values.model },
      ]);
      return;
    }
    const status: SearchStatus = searchStatusOf(phase);
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    upsertSearchAttributes(sqlSafe(progressSearchAttributes({ status, ...values, now: new Date(Date.now()) }, (name) => this.present.has(name))));
  }
}
