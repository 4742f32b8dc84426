// Package framegroup is the frame-grouped video layout of Jeong et al.'s
// interactive media server (FG §III) without I/O: streams and play levels,
// the packer that groups pictures into blocks, the cursor that plays a
// level block by block, and the on-device records, shared by the frame
// store that writes the layout and the simulator that measures it.
package framegroup
