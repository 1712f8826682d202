package runner

// lseek's whence values that find a file's data and holes (SEEK_DATA,
// SEEK_HOLE): copySparse keeps a hole a hole.
const (
	seekData = 3
	seekHole = 4
)
