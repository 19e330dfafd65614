// Row recycling for the virtualised DLQ table. A row element is keyed by a slot, not by the
// delivery it shows: when rows scroll out of view and others scroll in, the elements of the
// rows that left are handed to the rows that came, and React updates their text and position
// instead of unmounting some elements and mounting new ones. Keyed by delivery, every row
// scrolled past mounted new elements, whose garbage grew the webview by ~120 MiB over 100,000
// rows (`make bench-dlq-scroll`, docs/dlq.md); recycled, half of that.

/**
 * The slot of every row in `ids` (the rows rendered now, in order), given the slots of the
 * rows rendered last time (`prev`): a row still rendered keeps its slot (so it is not even
 * rendered again), a new row takes a slot a departed row left, and only when none is left a
 * new one. So no two rows rendered together share a slot, and there are never more slots than
 * the most rows ever rendered at once.
 */
export function assignSlots(
  prev: ReadonlyMap<string, number>,
  ids: readonly string[],
): Map<string, number> {
  const next = new Map<string, number>();
  const taken = new Set<number>();
  for (const id of ids) {
    const slot = prev.get(id);
    if (slot !== undefined && !next.has(id)) {
      next.set(id, slot);
      taken.add(slot);
    }
  }
  // The free slots, lowest first: the ones departed rows left, and any hole below the highest
  // slot, so the slots stay below the most rows ever rendered at once.
  const highest = prev.size === 0 ? -1 : Math.max(...prev.values());
  const free: number[] = [];
  for (let slot = highest; slot >= 0; slot--) if (!taken.has(slot)) free.push(slot);
  let fresh = highest + 1;
  for (const id of ids) {
    if (next.has(id)) continue;
    const slot = free.pop() ?? fresh++;
    next.set(id, slot);
  }
  return next;
}
