/**
 * Field checks of the timestamp rule: a datetime is templated only when its
 * fields name a real instant. Kept apart from the scanner so the rule's
 * grammar reads in one place (docs/normalization.md, "Timestamps").
 */

/** Days in a month of the proleptic Gregorian calendar (ISO 8601 section 4.3.2.2). */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Largest UTC offset in use (Line Islands, +14:00), in minutes. */
export const MAX_OFFSET_MINUTES = 14 * 60;
