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
// Block record, 8 bytes, one big-endian uint64 (the paper's Fig. 10 record,
// 6 bytes there):
//
//	bits 63-61  stream (0 IOdd, 1 IEven, 2 P, 3 BOdd, 4 BEven)
//	bit  60     fragment: the block's last picture continues in the stream's next block
//	bits 59-32  start frame index: 0-based index, within the stream, of the
//	            first picture with bytes in this block (a continued one counts)
//	bits 31-16  number of pictures with bytes in this block, continued and
//	            fragmented ones included (a block is closed early rather than exceed 65535)
//	bits 15-0   link offset: number of the stream's next block minus this
//	            block's number; 0 for the stream's last block, 0xFFFF when
//	            the distance is 65535 or more (search the records forward)
//
// Eight bytes rather than the paper's six buys a 28-bit frame index (2^28
// pictures: 103 days at 30 fps, against the paper's 3.5 hours with 18
// bits) and a 16-bit count, and keeps records aligned; it is 0.006% of a
// 128 KiB block. Block numbers need no field: a record's position is its
// block number.
//
// Frame record, 16 bytes, big-endian, everything needed to rebuild an MP4
// sample from its bytes:
//
//	0   8  decode time (high 48 bits, track timescale) | flags (low 16 bits)
//	8   4  composition offset, signed (presentation minus decode time)
//	12  4  size in bytes
//
// Flags: bit 0 sync sample, bit 1 reference picture (nal_ref_idc != 0),
// bits 2-3 coding type (0 I, 1 P, 2 B). A picture's duration is the next
// picture's decode time minus its own; the header gives the end time of
// the last one. A picture's offset within its stream is the sum of the
// sizes before it, and the stream's k-th block is found by following link
// offsets from the stream's first block, which the header records.
//
// Checksums (CRC-32C) in the header cover the header itself, the block
// records, and each stream's frame records separately, so a level verifies
// only what it reads.
package framestore
