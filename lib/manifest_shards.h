/* Which files an earlier run's manifest names as its shards, for --force
 * to remove once the new set is complete.  A manifest is data that may
 * have been edited or come from elsewhere, so only what convert or split
 * could have written counts. */
#ifndef ST_LIB_MANIFEST_SHARDS_H
#define ST_LIB_MANIFEST_SHARDS_H

/* Calls add(ctx, path) for each shard the manifest at manifest_path lists
 * that is a shard name ("NAME-NNNNN-of-NNNNN.EXT"), resolved by the rules
 * verify --manifest uses for untrusted manifests (relative, no "..", not
 * absolute, not a URL), and a regular file whose directory, links
 * resolved, is the manifest's directory or below it.  Anything else (an
 * unreadable manifest, a bad entry) is passed over in silence. */
void manifest_shards_each(const char *manifest_path, void (*add)(void *ctx, const char *path), void *ctx);

#endif
