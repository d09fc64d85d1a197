// Strings as the bytes the ports and the core carry values in, and back.

/** The UTF-8 bytes of `value`. */
export const text = (value: string): Uint8Array => new TextEncoder().encode(value);

/** `bytes` read as UTF-8. */
export const decode = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
