// The `Range` header of a volume read (RFC 9110 §14.1.2): one byte range, `bytes=first-last`, `bytes=first-` or the
// suffix `bytes=-count`, resolved against the volume's size. Several ranges or another unit are refused with a 400
// that says what is taken; a range that starts past the end is the 416 of the volume's size.
import { RingstoreError } from '../core/errors';

export interface ByteRange {
  offset: number;
  length: number;
}

const single = /^bytes=(\d{0,16})-(\d{0,16})$/;

/** The range a `Range` header asks of `size` bytes; the whole of them without one. */
export function parseByteRange(header: string | undefined, size: number): ByteRange {
  if (header === undefined) return { offset: 0, length: size };
  const match = single.exec(header.replace(/\s+/g, ''));
  if (!match || (match[1] === '' && match[2] === '')) {
    throw new RingstoreError('request.invalid', `Range must be one byte range: bytes=<first>-<last>, bytes=<first>- or bytes=-<count>`, {
      details: { field: 'range', in: 'header' },
    });
  }
  const [, first, last] = match;
  if (first === '') {
    // The last `count` bytes.
    const count = Math.min(Number(last), size);
    if (count === 0) throw unsatisfiable(header, size);
    return { offset: size - count, length: count };
  }
  const offset = Number(first);
  if (offset >= size) throw unsatisfiable(header, size);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < offset) {
    throw new RingstoreError('request.invalid', `Range ${header}: the last byte comes before the first`, {
      details: { field: 'range', in: 'header' },
    });
  }
  return { offset, length: end - offset + 1 };
}

/** The `Content-Range` of a range answered. */
export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.offset}-${range.offset + range.length - 1}/${size}`;
}

function unsatisfiable(header: string, size: number): RingstoreError {
  return new RingstoreError('volume.rangeNotSatisfiable', `Range ${header} starts past the end of the volume (${size} bytes)`, {
    details: { sizeBytes: size },
  });
}
