package builtin

// byteRank orders the 256 byte values by how often they occur in source
// code and documentation: 0 is the rarest, 255 the most common (space).
// literalFinder anchors its search on the pattern byte of lowest rank.
//
// It was computed once by counting bytes in the text files (no NUL in the
// first 8 KiB) of five corpora, each weighted equally: the Go tree
// ($GOROOT/src), the Python 3.11 standard library, /usr/include (C), Perl's
// modules and /usr/share/doc. The exact numbers matter little; what
// matters is that letters like 'e' and 't' rank far above '(' or 'Q'.
var byteRank = [256]uint8{
	0, 21, 13, 17, 27, 22, 34, 55, 1, 230, 246, 14, 77, 143, 45, 2, // 0x00
	23, 41, 42, 39, 7, 35, 60, 36, 12, 3, 8, 33, 31, 18, 24, 25, // 0x10
	255, 168, 214, 199, 180, 163, 169, 210, 226, 227, 207, 170, 233, 209, 234, 235, // 0x20
	242, 228, 221, 206, 203, 198, 201, 190, 197, 194, 216, 189, 193, 212, 208, 159, // 0x30
	166, 231, 191, 218, 202, 232, 196, 187, 181, 220, 165, 175, 219, 192, 213, 211, // 0x40
	204, 164, 217, 225, 229, 188, 178, 174, 179, 176, 162, 185, 186, 184, 157, 241, // 0x50
	173, 249, 223, 244, 243, 254, 238, 224, 237, 250, 177, 200, 245, 236, 251, 247, // 0x60
	240, 171, 248, 252, 253, 239, 205, 195, 222, 215, 172, 183, 167, 182, 158, 19, // 0x70
	154, 124, 147, 136, 105, 130, 123, 103, 139, 116, 119, 88, 95, 75, 82, 79, // 0x80
	100, 78, 81, 99, 152, 120, 80, 111, 138, 150, 71, 73, 145, 144, 87, 146, // 0x90
	160, 121, 86, 98, 128, 110, 115, 102, 85, 151, 104, 148, 113, 114, 90, 72, // 0xa0
	101, 129, 127, 107, 117, 106, 134, 155, 125, 133, 126, 93, 132, 118, 131, 76, // 0xb0
	9, 15, 161, 153, 74, 91, 47, 62, 56, 70, 67, 58, 94, 66, 142, 97, // 0xc0
	149, 109, 28, 51, 50, 64, 65, 83, 137, 141, 59, 61, 54, 4, 29, 49, // 0xd0
	96, 135, 156, 140, 84, 108, 122, 92, 89, 69, 63, 53, 57, 52, 16, 68, // 0xe0
	112, 20, 37, 46, 43, 30, 44, 5, 40, 10, 11, 6, 26, 48, 38, 32, // 0xf0
}
