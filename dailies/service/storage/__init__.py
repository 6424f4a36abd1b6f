"""Result files: the data directory or an S3 bucket, signed URLs, deletions the storage could not take yet."""
