/**
 * How a conversation shows in the Temporal UI and in list filters: its current details and its
 * search attributes. Current details cost nothing (they are answered from memory by the metadata
 * query); every search-attribute upsert is a history event and a visibility write, so they are
 * upserted only when the coarse status a person filters on changes — at query start, at query
 * end and when the conversation ends — never per loop iteration (issue 7: before, 2 of ~9.4
 * events per iteration were upserts).
 */
import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  FIRST_PROMPT_MAX_CHARS,
  FIRST_PROMPT_SEARCH_ATTRIBUTE,
  SEARCH_ATTRIBUTES,
  STATUS_SEARCH_ATTRIBUTE,
  type SearchStatus,
  progressSearchAttributes,
  searchStatusOf,
  sqlSafeSearchAttributes,
} from '../../common/search-attributes';
import { type CurrentDetailsInput, formatCurrentDetails } from './details';

export class ConversationVisibility {
  /** Attributes this run was started with (the client sets only those the server has registered). */
  private readonly present: ReadonlySet<string>;
  private lastStatus: string | undefined;
  /** Started without a first prompt (chat; the client set the attribute empty): named at its first query. */
  private unnamed: boolean;

  constructor() {
    const attributes = workflowInfo().typedSearchAttributes;
    this.present = new Set(SEARCH_ATTRIBUTES.filter((key) => attributes.get(key) !== undefined).map((key) => key.name));
    this.lastStatus = attributes.get(STATUS_SEARCH_ATTRIBUTE);
    this.unnamed = attributes.get(FIRST_PROMPT_SEARCH_ATTRIBUTE) === '';
  }

  /** The current details card. */
  showDetails(details: CurrentDetailsInput): void {
    setCurrentDetails(formatCurrentDetails(details));
  }

  /**
   * A phase change: upserts the search attributes when the coarse status changed — with the first
   * prompt (`prompt`: the last one the loop took) in the same upsert when the conversation has none yet.
   */
  onPhase(phase: string, values: { model: string; turns: number; costUsd: number; prompt?: string }): void {
    if (!this.present.has(STATUS_SEARCH_ATTRIBUTE.name)) return;
    const status: SearchStatus = searchStatusOf(phase);
    if (status === this.lastStatus) return;
    this.lastStatus = status;
    const { prompt, ...progress } = values;
    const pairs = progressSearchAttributes({ status, ...progress, now: new Date(Date.now()) }, (name) => this.present.has(name));
    // The first upsert that knows a prompt (the first query's start or end): the prompt of that query.
    if (this.unnamed && prompt?.trim()) {
      this.unnamed = false;
      pairs.push({ key: FIRST_PROMPT_SEARCH_ATTRIBUTE, value: prompt.trim().slice(0, FIRST_PROMPT_MAX_CHARS) });
    }
    upsertSearchAttributes(sqlSafeSearchAttributes(pairs));
  }
}
