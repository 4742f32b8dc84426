// Package media packages pre-encoded H.264/AAC MP4 renditions into a
// title of the capacity tier: CMAF init and media segments, DASH and HLS
// manifests, the frame-grouped store of each video rendition, and the
// play levels built from that store; it also serves uploads.
//
// # A title directory
//
// Ingest builds a title in a temporary directory under the capacity root
// and renames it into place as <root>/<video>/, so readers see the old
// title or the new one, never a mixture, and a failed or interrupted
// ingest leaves nothing. For video rendition R (say "700k") and the audio
// track:
//
//	<video>/strata.json          catalog metadata: segment_duration_s, each rendition's
//	                             bandwidth (bits/s, average); the "media" object adds
//	                             what packaging found (origin ignores it)
//	<video>/manifest.mpd         DASH: video set (id 1) of the L1 renditions, audio set
//	                             (id 2), DASH-IF trick-mode set (id 3) of the L4 and L5
//	                             tracks, EssentialProperty trickmode value="1"
//	<video>/master.m3u8          HLS: one variant per L1 rendition with the audio group,
//	                             EXT-X-I-FRAME-STREAM-INF per L4/L5 track
//	<video>/manifest-L2.mpd ... manifest-L5.mpd, master-L2.m3u8 ... master-L5.m3u8
//	                             each play level as an ordinary stream: L2 and L3
//	                             (reduced frame rate) with audio, L4 and L5 (I pictures
//	                             only, for fast-forward) without
//	<video>/R/init.mp4           CMAF init segment (one track, id 1)
//	<video>/R/1.m4s, 2.m4s ...   media segments (ident.SegmentName), one fragment each,
//	                             cut at sync samples nearest each multiple of the segment
//	                             duration (10 s default)
//	<video>/R/playlist.m3u8      HLS media playlist (EXT-X-MAP init.mp4)
//	<video>/R-L2/ ... R-L5/      the same for each play level: rendition "R-L<n>"
//	<video>/R-L4/iframes.m3u8    HLS I-frame playlist (L4 and L5: one fragment per picture)
//	<video>/audio/               the audio track: init.mp4, n.m4s, playlist.m3u8
//	<video>/.frames/R/blocks     the frame-grouped store of R (package framestore:
//	<video>/.frames/R/index      five streams in blocks of S bytes, block and frame records)
//
// Every file but the store's is an ordinary object of the capacity tier,
// served through the tier engine: a play level's segments are rendition
// "R-L<n>" of the title, built at ingest by reading from the store only
// the blocks of the streams that level includes (L1 reads all five, L5
// only I-odd), so their segment ids are FlashStream's (video, rendition,
// number). The store is written through device.OpenFile (O_DIRECT where
// the file system allows, whole aligned blocks of S bytes, the long
// lifetime hint); its directory starts with '.', so the catalog and the
// HTTP API never list or serve it.
//
// # Timing
//
// Decode and composition times are kept as encoded, so composition
// offsets stay non-negative: negative ones (trun version 1) would make
// players that normalize them per fragment, as ffmpeg's DASH reader does,
// shift a reduced level's segments differently when dropping B pictures
// changes a segment's smallest offset. The video edit list's shift
// (ffmpeg's B-frame delay, the media time presented first) becomes the
// DASH presentationTimeOffset, and audio decode times are moved onto the
// same media timeline, so HLS players that align tracks by timestamps
// keep the source's lip sync too. A reduced level keeps each kept
// picture's decode and presentation time and stretches decode durations
// to the next kept picture, so its timeline is as continuous and as long
// as L1's.
package media
