package framestore

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/strata-media/strata/internal/core/framegroup"
	"github.com/strata-media/strata/internal/storage/device"
)

// DefaultBlockSize is S, the size of every block and every request: 128
// KiB, where the paper's SSD1 saturated (its SSD2 wanted 256 KiB).
const DefaultBlockSize = 128 << 10

// Options configure Create and Open.
type Options struct {
	// BlockSize is S in bytes: a multiple of 4 KiB. Choose the device's
	// optimal request size, which `strata probe` measures. Default 128
	// KiB. Open takes it from the store and ignores this field.
	BlockSize int
	// OpenDevice opens a file of the store: for writing with size > 0
	// (the file's exact size), for reading with size 0 and readOnly.
	// Default: device.OpenFile, with O_DIRECT where the file system
	// allows, and the long lifetime hint on files opened for writing.
	OpenDevice func(path string, size int64, readOnly bool) (device.Device, error)
	// Logger receives warnings (O_DIRECT refused); nil: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills in zero fields.
func (o *Options) EnsureDefaults() {
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.OpenDevice == nil {
		log := o.Logger
		o.OpenDevice = func(path string, size int64, readOnly bool) (device.Device, error) {
			return openFile(path, size, readOnly, log)
		}
	}
}

// openFile is the default OpenDevice. A title's frames live as long as
// the title: the long lifetime hint (multi-streamed SSD §3), best effort.
func openFile(path string, size int64, readOnly bool, log *slog.Logger) (device.Device, error) {
	f, err := device.OpenFile(path, device.FileOptions{Size: size, ReadOnly: readOnly, Perm: 0o644, Logger: log})
	if err != nil {
		return nil, err
	}
	if !readOnly {
		_ = f.SetLifetime(device.LifetimeLong) // unsupported hints change nothing
	}
	return f, nil
}

// Frame is one picture: its stream, its record and, when read back, its
// bytes.
type Frame struct {
	Stream framegroup.Stream
	framegroup.FrameRecord
	Data []byte
}

// Input is what Create stores: pictures in decoding order, without their
// bytes, which Read returns on demand.
type Input struct {
	// Timescale of decode times and offsets, ticks per second.
	Timescale uint32
	// EndTime is the decode time of the last picture plus its duration.
	EndTime uint64
	// Frames in decoding order; Data is ignored.
	Frames []Frame
	// Read returns the bytes of Frames[i]; it is called once per picture,
	// in order.
	Read func(i int) ([]byte, error)
}

// Summary describes a store that Create wrote.
type Summary struct {
	BlockSize   int
	DataBlocks  int                           // N
	IndexBlocks int                           // blocks of the index file
	StreamBlock [framegroup.NumStreams]int    // data blocks per stream
	Frames      [framegroup.NumStreams]int    // pictures per stream
	Bytes       [framegroup.NumStreams]uint64 // picture bytes per stream, without padding
}

// Create writes a store for in into dir (created if needed; existing
// store files are an error). On error the files are removed.
func Create(dir string, in Input, opts Options) (Summary, error) {
	opts.EnsureDefaults()
	if err := checkInput(in, opts.BlockSize); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("framestore: %w", err)
	}
	sum, err := create(dir, in, opts)
	if err != nil {
		os.Remove(filepath.Join(dir, BlocksFile))
		os.Remove(filepath.Join(dir, IndexFile))
	}
	return sum, err
}

func checkInput(in Input, size int) error {
	if err := framegroup.CheckBlockSize(size); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(in.Frames) == 0 {
		return fmt.Errorf("%w: no pictures", ErrInvalid)
	}
	if in.Timescale == 0 || in.Read == nil || in.EndTime > framegroup.MaxDTS {
		return fmt.Errorf("%w: timescale %d, end time %d", ErrInvalid, in.Timescale, in.EndTime)
	}
	for i, f := range in.Frames {
		if f.DTS > in.EndTime || i > 0 && f.DTS <= in.Frames[i-1].DTS {
			return fmt.Errorf("%w: picture %d: decode time %d out of order", ErrInvalid, i, f.DTS)
		}
	}
	return nil
}

func create(dir string, in Input, opts Options) (Summary, error) {
	plan := framegroup.NewPacker(opts.BlockSize, false, nil)
	for _, f := range in.Frames {
		if err := plan.Add(f.Stream, int(f.Size), nil); err != nil {
			return Summary{}, err
		}
	}
	if err := plan.Finish(); err != nil {
		return Summary{}, err
	}
	l, err := writeBlocks(filepath.Join(dir, BlocksFile), in, int64(plan.Layout().Blocks()), opts)
	if err != nil {
		return Summary{}, err
	}
	index := buildIndex(l, in)
	if err := writeFile(filepath.Join(dir, IndexFile), index, opts); err != nil {
		return Summary{}, err
	}
	return summarize(l, in, len(index)/opts.BlockSize), nil
}

// writeBlocks packs the pictures into the blocks file of n blocks.
func writeBlocks(path string, in Input, n int64, opts Options) (*framegroup.Layout, error) {
	dev, err := opts.OpenDevice(path, n*int64(opts.BlockSize), false)
	if err != nil {
		return nil, fmt.Errorf("framestore: %w", err)
	}
	if err := checkAlignment(dev, opts.BlockSize); err != nil {
		dev.Close()
		return nil, err
	}
	buf := device.AlignedBuffer(opts.BlockSize, dev.Alignment())
	p := framegroup.NewPacker(opts.BlockSize, true, func(b framegroup.Block) error {
		copy(buf, b.Data)
		_, err := dev.WriteAt(buf, int64(b.Number)*int64(opts.BlockSize))
		return err
	})
	err = packAll(p, in)
	if err == nil && int64(p.Layout().Blocks()) != n {
		err = fmt.Errorf("framestore: wrote %d blocks, planned %d", p.Layout().Blocks(), n)
	}
	return p.Layout(), closeDevice(dev, err)
}

func packAll(p *framegroup.Packer, in Input) error {
	for i, f := range in.Frames {
		data, err := in.Read(i)
		if err != nil {
			return fmt.Errorf("framestore: reading picture %d: %w", i, err)
		}
		if err := p.Add(f.Stream, int(f.Size), data); err != nil {
			return err
		}
	}
	return p.Finish()
}

// closeDevice syncs (when err is nil) and closes dev, returning the first
// error.
func closeDevice(dev device.Device, err error) error {
	if err == nil {
		err = dev.Sync()
	}
	return errors.Join(err, dev.Close())
}

func checkAlignment(dev device.Device, size int) error {
	if size%dev.Alignment() != 0 {
		return fmt.Errorf("%w: block size %d is not a multiple of the device alignment %d", ErrInvalid, size, dev.Alignment())
	}
	return nil
}

// writeFile writes data (a whole number of blocks) block by block.
func writeFile(path string, data []byte, opts Options) error {
	dev, err := opts.OpenDevice(path, int64(len(data)), false)
	if err != nil {
		return fmt.Errorf("framestore: %w", err)
	}
	if err := checkAlignment(dev, opts.BlockSize); err != nil {
		dev.Close()
		return err
	}
	buf := device.AlignedBuffer(opts.BlockSize, dev.Alignment())
	for off := 0; off < len(data) && err == nil; off += opts.BlockSize {
		copy(buf, data[off:])
		_, err = dev.WriteAt(buf, int64(off))
	}
	return closeDevice(dev, err)
}

// buildIndex encodes the index file: header, block records, frame
// records, each region padded to whole blocks.
func buildIndex(l *framegroup.Layout, in Input) []byte {
	size := l.BlockSize()
	h := framegroup.Header{BlockSize: uint32(size), Timescale: in.Timescale, Blocks: uint32(l.Blocks()),
		EndTime: in.EndTime, FirstBlock: l.First()}
	var frames [framegroup.NumStreams][]byte
	for _, f := range in.Frames {
		var rec [framegroup.FrameRecordSize]byte
		f.FrameRecord.Encode(rec[:])
		frames[f.Stream] = append(frames[f.Stream], rec[:]...)
		h.Frames[f.Stream]++
	}
	records := framegroup.EncodeRecords(l.Records())
	h.RecordsCRC = framegroup.Checksum(records)
	out := pad(h.Encode(), size)
	out = append(out, pad(records, size)...)
	for s := range framegroup.NumStreams {
		h.FramesCRC[s] = framegroup.Checksum(frames[s])
		out = append(out, pad(frames[s], size)...)
	}
	copy(out, h.Encode()) // again, now with every checksum
	return out
}

// pad extends b with zeros to a multiple of size.
func pad(b []byte, size int) []byte {
	if r := len(b) % size; r != 0 {
		b = append(b, make([]byte, size-r)...)
	}
	return b
}

func summarize(l *framegroup.Layout, in Input, indexBlocks int) Summary {
	s := Summary{BlockSize: l.BlockSize(), DataBlocks: l.Blocks(), IndexBlocks: indexBlocks}
	for st := range framegroup.Stream(framegroup.NumStreams) {
		s.StreamBlock[st] = len(l.Stream(st))
	}
	for _, f := range in.Frames {
		s.Frames[f.Stream]++
		s.Bytes[f.Stream] += uint64(f.Size)
	}
	return s
}
