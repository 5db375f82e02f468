// Names in paths (CONVENTIONS.md#names): collection names ^[A-Za-z][A-Za-z0-9_-]{0,63}$; resource ids 1-128
// characters of [A-Za-z0-9._~-] (RFC 3986 §2.3 unreserved characters, so an id never needs
// percent-encoding), and never "." or "..", which RFC 3986 §5.2.4 dot-segment removal would eat.
// A segment that starts with "$" is a system segment and is never a collection or id.

// Exported for GET /$openapi, which states them as the path parameters' patterns.
export const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const RESOURCE_ID = /^[A-Za-z0-9._~-]{1,128}$/;

export function isCollectionName(name: string): boolean {
  return COLLECTION_NAME.test(name);
}

export function isResourceId(id: string): boolean {
  return RESOURCE_ID.test(id) && id !== '.' && id !== '..';
}

export function isSystemSegment(segment: string): boolean {
  return segment.startsWith('$');
}
