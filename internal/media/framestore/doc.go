// Package framestore is the frame-grouped trick-play store (Jeong et al.,
// "An SSD-Based Storage System for an Interactive Media Server Using Video
// Frame Grouping", §III): the coded pictures of one video rendition grouped
// by type into five streams, each packed into fixed-size blocks, so that
// every play level reads whole blocks of only the streams it needs.
//
// # Streams and play levels
//
// Pictures are numbered per kind in decoding order, from 1 as in the paper,
// and go to one of five streams (see framegroup.Grouper for the rule):
//
//	IOdd   odd-numbered I pictures (I1, I3, ...)
//	IEven  even-numbered I pictures
//	P      P pictures and reference B pictures (B-pyramid)
//	BOdd   odd-numbered non-reference B pictures
//	BEven  even-numbered non-reference B pictures
//
// A play level (paper Fig. 1) is a set of streams:
//
//	L1  all frames                              IOdd IEven P BOdd BEven
//	L2  without even non-reference B            IOdd IEven P BOdd
//	L3  without non-reference B                 IOdd IEven P
//	L4  I only                                  IOdd IEven
//	L5  odd I only                              IOdd
//
// # Files
//
// A store is a directory with two files, both made of blocks of S bytes
// (Options.BlockSize; default 128 KiB, the paper's SSD1 optimum; set it to
// the optimal request size `strata probe` reports for the device, which is
// the same measurement as the paper's Figs. 8-9):
//
//	blocks  N data blocks. Block b starts at byte b×S. Blocks are numbered
//	        in the order they were written: whenever one stream's buffer
//	        holds S bytes it is written as the next block (paper Fig. 7), and
//	        at the end each stream's partial buffer, zero-padded, in stream
//	        order. A block holds the bytes of one stream's pictures back to
//	        back, nothing else; a picture that does not fit continues at the
//	        start of the stream's next block (the fragment bit says so).
//	index   the metadata, in whole blocks of S bytes, every region
//	        zero-padded to a block boundary:
//	          block 0: the header (128 bytes, see framegroup.Header)
//	          then ceil(8N/S) blocks: N block records, 8 bytes each, in block order
//	          then per stream (IOdd, IEven, P, BOdd, BEven): ceil(16F/S)
//	          blocks of its F frame records, 16 bytes each, in decoding order
//
// Every write is one whole block at a block-aligned offset, sequential in
// each file, through a device.Device (O_DIRECT where the file system
// allows) opened with the long lifetime hint: a title's frames live as
// long as the title.
//
// The header and the records are framegroup's format (the one the
// frame-grouping simulator lays out too): framegroup.Header, 128 bytes;
// framegroup.BlockRecord, 8 bytes a block (the paper's Fig. 10 record, 6
// bytes there) with the block's stream, fragment bit, start frame index,
// picture count and link offset to the stream's next block; and
// framegroup.FrameRecord, 16 bytes a picture, everything needed to
// rebuild an MP4 sample from its bytes. A picture's duration is the next
// picture's decode time minus its own; the header gives the end time of
// the last one. A stream's blocks are found by following link offsets
// from its first block, which the header records.
//
// Checksums (CRC-32C) in the header cover the header itself, the block
// records, and each stream's frame records separately, so a level verifies
// only what it reads.
package framestore
