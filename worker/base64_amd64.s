//go:build amd64

#include "textflag.h"

// Base64 decoding of Node's alphabet (both '+' '/' and '-' '_') with AVX2,
// 32 characters to 24 bytes a step; see base64_amd64.go. '-' and '_'
// first become '+' and '/'. A character is valid when the bit of its high
// nibble is clear in its low nibble's entry of lutLo (lutHi gives each
// high nibble 2-7 its own bit, every other one a bit lutLo always has);
// its 6-bit value is the character plus lutRoll[high nibble], where '/'
// takes the entry before its nibble's. The values are packed with
// multiply-adds (a<<18 | b<<12 | c<<6 | d per four), a byte shuffle per
// lane and a dword permute across lanes. (The tables are generated and
// checked against every byte value; the Go tests check the result.)

DATA b64k<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b64k<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b64k<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b64k<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA b64k<>+32(SB)/8, $0x4141414141414155
DATA b64k<>+40(SB)/8, $0x6a6b6b6b6a434141
DATA b64k<>+48(SB)/8, $0x4141414141414155
DATA b64k<>+56(SB)/8, $0x6a6b6b6b6a434141
DATA b64k<>+64(SB)/8, $0x2010080402014040
DATA b64k<>+72(SB)/8, $0x4040404040404040
DATA b64k<>+80(SB)/8, $0x2010080402014040
DATA b64k<>+88(SB)/8, $0x4040404040404040
DATA b64k<>+96(SB)/8, $0xb9b9bfbf04131000
DATA b64k<>+104(SB)/8, $0x0000000000000000
DATA b64k<>+112(SB)/8, $0xb9b9bfbf04131000
DATA b64k<>+120(SB)/8, $0x0000000000000000
DATA b64k<>+128(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA b64k<>+136(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA b64k<>+144(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA b64k<>+152(SB)/8, $0x2f2f2f2f2f2f2f2f
DATA b64k<>+160(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA b64k<>+168(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA b64k<>+176(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA b64k<>+184(SB)/8, $0x2d2d2d2d2d2d2d2d
DATA b64k<>+192(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA b64k<>+200(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA b64k<>+208(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA b64k<>+216(SB)/8, $0x5f5f5f5f5f5f5f5f
DATA b64k<>+224(SB)/8, $0x0202020202020202
DATA b64k<>+232(SB)/8, $0x0202020202020202
DATA b64k<>+240(SB)/8, $0x0202020202020202
DATA b64k<>+248(SB)/8, $0x0202020202020202
DATA b64k<>+256(SB)/8, $0x3030303030303030
DATA b64k<>+264(SB)/8, $0x3030303030303030
DATA b64k<>+272(SB)/8, $0x3030303030303030
DATA b64k<>+280(SB)/8, $0x3030303030303030
DATA b64k<>+288(SB)/8, $0x0140014001400140
DATA b64k<>+296(SB)/8, $0x0140014001400140
DATA b64k<>+304(SB)/8, $0x0140014001400140
DATA b64k<>+312(SB)/8, $0x0140014001400140
DATA b64k<>+320(SB)/8, $0x0001100000011000
DATA b64k<>+328(SB)/8, $0x0001100000011000
DATA b64k<>+336(SB)/8, $0x0001100000011000
DATA b64k<>+344(SB)/8, $0x0001100000011000
DATA b64k<>+352(SB)/8, $0x090a040506000102
DATA b64k<>+360(SB)/8, $0x808080800c0d0e08
DATA b64k<>+368(SB)/8, $0x090a040506000102
DATA b64k<>+376(SB)/8, $0x808080800c0d0e08
DATA b64k<>+384(SB)/8, $0x0000000100000000
DATA b64k<>+392(SB)/8, $0x0000000400000002
DATA b64k<>+400(SB)/8, $0x0000000600000005
DATA b64k<>+408(SB)/8, $0x0000000700000003
GLOBL b64k<>(SB), RODATA|NOPTR, $416

// func b64DecodeAVX2(dst []byte, src string) (read int)
TEXT ·b64DecodeAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), R8
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), R9
	XORQ AX, AX // characters read
	XORQ BX, BX // bytes written
	VMOVDQU b64k<>+0(SB), Y6
	VMOVDQU b64k<>+32(SB), Y7
	VMOVDQU b64k<>+64(SB), Y8
	VMOVDQU b64k<>+96(SB), Y9
	VMOVDQU b64k<>+384(SB), Y10
	VMOVDQU b64k<>+288(SB), Y11
	VMOVDQU b64k<>+320(SB), Y12
	VMOVDQU b64k<>+352(SB), Y13
	VMOVDQU b64k<>+128(SB), Y14
	VMOVDQU b64k<>+160(SB), Y15

loop:
	LEAQ 32(AX), CX
	CMPQ CX, R9
	JGT done
	LEAQ 32(BX), CX
	CMPQ CX, R8
	JGT done
	VMOVDQU (SI)(AX*1), Y0
	// '-' → '+', '_' → '/'
	VPCMPEQB Y15, Y0, Y1
	VPAND b64k<>+224(SB), Y1, Y1
	VPSUBB Y1, Y0, Y0
	VPCMPEQB b64k<>+192(SB), Y0, Y1
	VPAND b64k<>+256(SB), Y1, Y1
	VPSUBB Y1, Y0, Y0
	// nibbles, and the validity test
	VPSRLD $4, Y0, Y1
	VPAND Y6, Y1, Y1
	VPAND Y6, Y0, Y2
	VPSHUFB Y2, Y7, Y3
	VPSHUFB Y1, Y8, Y4
	VPTEST Y3, Y4
	JNE done
	// values
	VPCMPEQB Y14, Y0, Y5
	VPADDB Y5, Y1, Y1
	VPSHUFB Y1, Y9, Y1
	VPADDB Y1, Y0, Y0
	// pack
	VPMADDUBSW Y11, Y0, Y0
	VPMADDWD Y12, Y0, Y0
	VPSHUFB Y13, Y0, Y0
	VPERMD Y0, Y10, Y0
	VMOVDQU Y0, (DI)(BX*1)
	ADDQ $32, AX
	ADDQ $24, BX
	JMP loop

done:
	VZEROUPPER
	MOVQ AX, read+40(FP)
	RET
