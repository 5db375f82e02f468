// The properties a collection knows, for validating queries (CONVENTIONS.md#filter-errors-and-budget:
// a property that does not exist in a filter is a 400). With a declared schema, its fields (plus `id`).
// Otherwise every path any item of the collection has ever had, from the field registry that the
// write path keeps (lib/writes/field-registry.ts): paths are never forgotten, so a query valid a moment
// ago stays valid while items come and go. A collection that has never held an item has no paths in
// the registry; every well-formed query on it is valid and matches nothing
// (CONVENTIONS.md#filter-errors-and-budget: 200 with "value": []). A lookup is one set membership,
// whatever the number of paths known.
import type { CollectionConfig } from '../config.js';
import { pathKey } from '../writes/field-registry.js';

export class KnownProperties {
  constructor(
    private readonly schemaOf: (collection: string) => CollectionConfig['schema'] | undefined,
    /** The paths the registry holds for a collection (as pathKey writes them), or undefined for none. */
    private readonly registry: (collection: string) => ReadonlySet<string> | undefined,
  ) {}

  /** Is `path` a property of `collection`? */
  has(collection: string, path: readonly string[]): boolean {
    const schema = this.schemaOf(collection);
    if (schema !== undefined) {
      const [head] = path;
      if (head === undefined) return false;
      if (head === 'id') return path.length === 1;
      const declared = Object.hasOwn(schema, head) ? schema[head] : undefined;
      if (declared === undefined) return false;
      // Below a declared object or array field the schema says nothing more; accept what items have had.
      return path.length === 1 || ((declared === 'object' || declared === 'array') && this.seen(collection, path));
    }
    const known = this.registry(collection);
    if (known === undefined) return path.length > 0;
    return this.seen(collection, path);
  }

  private seen(collection: string, path: readonly string[]): boolean {
    const known = this.registry(collection);
    return known !== undefined && path.length > 0 && known.has(pathKey(path));
  }
}
