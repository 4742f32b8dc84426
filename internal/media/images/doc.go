// Package images is Strata's multi-resolution image store (MRIS): every
// image is kept as a ladder of variants generated at upload, in a key/value
// store whose LSM tree (keys, metadata, small variants, write-ahead log)
// lives on the flash tier and whose value log (variants of SizeThreshold
// bytes and more) lives on the capacity tier (MRIS §3). It also serves them
// over HTTP, with the IIIF Image API 3.0 at level 2 (iiif.go), and passes the
// large variants through the tier engine's RAM and flash caches, so hot
// ones are placed by hotness and not by size alone (MRIS §3, future work).
//
// # Store
//
// Badger v4 has MRIS's shape: Dir on flash, ValueDir on capacity,
// ValueThreshold as MRIS's SizeThreshold (128 KiB), ValueLogFileSize as
// its LargeSpace SplitThreshold (64 MiB). Keys are in keys.go. An upload's
// variants, the original and the metadata are one Badger transaction,
// committed with SyncWrites: the value log and the write-ahead log are
// fsynced before Put returns, so an acknowledged upload survives a crash,
// and a re-upload replaces every variant at once (old keys deleted in the
// same transaction). Value log GC runs from a goroutine that Close stops.
//
// Measured on this project's 2-core VM (BenchmarkPut, 1600x1200 photo,
// five variants of 534 KB in all): about 6 ms per upload synced against
// 1.1 ms without sync, so durability costs about 5 ms per upload, under 1%
// of generating the variants of a 12-megapixel photo.
//
// # Variants
//
// The default ladder is thumbnail 100x100, small 600x800, medium 1280 on
// the longest side and large 2048x3072, each fitted inside its box, never
// enlarged; a rung that would be enlarged keeps the original's size and
// shares the bytes of the original (an upright JPEG) or of an equal rung.
// Orientation from EXIF is applied. Uploads are checked before decoding:
// type from the header (JPEG, PNG, WebP), declared pixels against
// MaxPixels and the RAM their decode takes (bytes per pixel count)
// against MaxDecodeBytes (image bombs), body size against MaxUploadBytes.
//
// Renderers, BenchmarkRender (12 MP JPEG to the default ladder, decode,
// scale and encode): pure Go with box halving then Catmull-Rom about 0.9 s,
// Catmull-Rom directly 1.0 s, approximate bilinear 0.45 s (but it aliases:
// it samples, it does not filter), libvips (govips, -tags vips) 0.44 s. So
// libvips is about twice as fast; the default stays pure Go, which needs
// no cgo and no system library, and libvips is the build-tagged option
// "libvips".
package images
