/**
 * US dollars, formatted one way (issue 20, item 5). Pure: both sides import it.
 *
 * Costs per line (CLI result line, status, `/cost`, `list`, chat) show four decimals, since a turn
 * costs cents; bench tables two; messages that quote a cost next to a budget show two significant
 * digits under a dollar, so a small cost is not rounded to $0.00.
 */

/** How many decimals, or `'significant'`: two significant digits under $1 ($0.0032, $0.5), two decimals from $1 ($12.35), `$0` for nothing. */
export type UsdDigits = number | 'significant';

/** `amount` dollars as `$…` with the digits asked for (default four decimals: `$0.0123`). */
export function formatUsd(amount: number, digits: UsdDigits = 4): string {
  if (digits !== 'significant') return `$${amount.toFixed(digits)}`;
  if (amount === 0) return '$0';
  if (amount >= 1) return `$${amount.toFixed(2)}`;
  return `$${amount.toPrecision(2).replace(/0+$/, '').replace(/\.$/, '')}`;
}
