// The syntax of If-Match and If-None-Match (RFC 9110 §13.1.1–2): `*`, or a list of entity tags
// (§8.8.3), strong `"…"` or weak `W/"…"`. What a tag means for a write is the core's decision.

/** One entity tag; `opaque` is what stands between the quotes. */
export interface EntityTag {
  weak: boolean;
  opaque: string;
}

export type EntityTagCondition = '*' | EntityTag[];

export type EntityTagParse = { ok: true; condition: EntityTagCondition } | { ok: false; problem: string };

const isOws = (char: string | undefined) => char === ' ' || char === '\t';

/**
 * etagc = %x21 / %x23-7E / obs-text. Header values reach the handler decoded, so obs-text is any
 * character past ASCII; such a tag can only be foreign (it never matches), but it is well formed.
 */
const isEtagc = (code: number) => code === 0x21 || (code >= 0x23 && code <= 0x7e) || code >= 0x80;

const shown = (char: string) => {
  const code = char.charCodeAt(0);
  return code < 0x20 || code === 0x7f ? `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${char}'`;
};

const fail = (problem: string): EntityTagParse => ({ ok: false, problem });

/**
 * Parses `*` or `#entity-tag`. Empty list elements (`"1", , "2"`) are ignored, as recipients must;
 * a value with no entity tag at all is refused, since a condition naming nothing is a client's bug.
 * More than `tagsMax` tags is refused too: each becomes an operand of the write's condition.
 */
export function parseEntityTags(value: string, tagsMax: number): EntityTagParse {
  let end = value.length;
  while (end > 0 && isOws(value[end - 1])) end -= 1;
  let at = 0;
  const skipOws = () => {
    while (at < end && isOws(value[at])) at += 1;
  };
  skipOws();
  if (value.slice(at, end) === '*') return { ok: true, condition: '*' };
  const tags: EntityTag[] = [];
  while (at < end) {
    if (value[at] === ',') {
      at += 1;
      skipOws();
      continue;
    }
    if (value[at] === '*') return fail('* stands alone: it cannot be listed with entity tags');
    let weak = false;
    if (value.startsWith('W/', at)) {
      weak = true;
      at += 2;
    } else if (value.startsWith('w/', at)) {
      return fail('the weak prefix is W/ (uppercase)');
    }
    if (at >= end) return fail('W/ must be followed by an entity tag in double quotes');
    if (value[at] !== '"') {
      return fail(`expected an entity tag in double quotes, such as "3" or W/"3", at ${shown(value[at]!)} (position ${at + 1})`);
    }
    at += 1;
    const opaqueStart = at;
    while (at < end && value[at] !== '"') {
      if (!isEtagc(value.charCodeAt(at))) return fail(`${shown(value[at]!)} is not allowed in an entity tag (position ${at + 1})`);
      at += 1;
    }
    if (at >= end) return fail('an entity tag is missing its closing double quote');
    tags.push({ weak, opaque: value.slice(opaqueStart, at) });
    if (tags.length > tagsMax) return fail(`at most ${tagsMax} entity tags are accepted`);
    at += 1;
    skipOws();
    if (at < end && value[at] !== ',') return fail(`entity tags are separated by commas (position ${at + 1})`);
  }
  if (tags.length === 0) return fail('lists no entity tag: send * or tags such as "3"');
  return { ok: true, condition: tags };
}

/** The versions of this API are its entity tags, `"<version>"` in plain decimal (see `etagOf`). */
const versionPattern = /^[1-9][0-9]{0,14}$/;

/** The version an entity tag of this API names, ignoring weakness; undefined for a tag this API never sends. */
export function versionOfTag(tag: EntityTag): number | undefined {
  return versionPattern.test(tag.opaque) ? Number(tag.opaque) : undefined;
}

/**
 * The versions a condition's tags can match. If-Match compares strongly, so a weak tag matches
 * nothing there; If-None-Match compares weakly, so `W/"3"` is version 3 (RFC 9110 §8.8.3.2).
 * Foreign tags match nothing either way. Duplicates are dropped.
 */
export function versionsMatched(condition: EntityTagCondition, comparison: 'strong' | 'weak'): '*' | number[] {
  if (condition === '*') return '*';
  const versions = new Set<number>();
  for (const tag of condition) {
    const version = comparison === 'strong' && tag.weak ? undefined : versionOfTag(tag);
    if (version !== undefined) versions.add(version);
  }
  return [...versions];
}
