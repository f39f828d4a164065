//! The JVM instruction set, written down once (JVMS §6.5): mnemonic, encoded length and shape.
//! The decoder, the encoder, the editor and the listing all read this table.

/// How an instruction's operands are laid out, as far as relocation cares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// Fixed length, no bytecode offsets inside.
    Plain,
    /// A signed 16-bit branch offset after the opcode (if*, goto, jsr).
    Branch16,
    /// A signed 32-bit branch offset (goto_w, jsr_w).
    Branch32,
    TableSwitch,
    LookupSwitch,
    /// The `wide` prefix: the length depends on the modified opcode.
    Wide,
    /// Not a valid opcode in a class file.
    Invalid,
}

macro_rules! opcodes {
    ($( $code:literal $name:ident $len:literal $shape:ident; )*) => {
        $( pub const $name: u8 = $code; )*

        /// Mnemonic, encoded length (0 when variable) and shape of every opcode value; a constant so
        /// that other tables can be derived from it at compile time.
        pub const TABLE_CONST: [(&str, u8, Shape); 256] = {
            let mut t = [("<invalid>", 1u8, Shape::Invalid); 256];
            $( t[$code as usize] = (opcodes!(@lower $name), $len, Shape::$shape); )*
            t
        };
        /// [`TABLE_CONST`] in one place in memory.
        pub static TABLE: [(&str, u8, Shape); 256] = TABLE_CONST;
    };
    (@lower $name:ident) => { $crate::bytecode::opcode::lower::$name };
}

/// Lower-case mnemonics, as javap prints them.
#[allow(non_upper_case_globals)]
pub mod lower {
    macro_rules! mnemonics { ($($n:ident = $s:literal),* $(,)?) => { $( pub const $n: &str = $s; )* }; }
    mnemonics!(
        NOP = "nop",
        ACONST_NULL = "aconst_null",
        ICONST_M1 = "iconst_m1",
        ICONST_0 = "iconst_0",
        ICONST_1 = "iconst_1",
        ICONST_2 = "iconst_2",
        ICONST_3 = "iconst_3",
        ICONST_4 = "iconst_4",
        ICONST_5 = "iconst_5",
        LCONST_0 = "lconst_0",
        LCONST_1 = "lconst_1",
        FCONST_0 = "fconst_0",
        FCONST_1 = "fconst_1",
        FCONST_2 = "fconst_2",
        DCONST_0 = "dconst_0",
        DCONST_1 = "dconst_1",
        BIPUSH = "bipush",
        SIPUSH = "sipush",
        LDC = "ldc",
        LDC_W = "ldc_w",
        LDC2_W = "ldc2_w",
        ILOAD = "iload",
        LLOAD = "lload",
        FLOAD = "fload",
        DLOAD = "dload",
        ALOAD = "aload",
        ILOAD_0 = "iload_0",
        ILOAD_1 = "iload_1",
        ILOAD_2 = "iload_2",
        ILOAD_3 = "iload_3",
        LLOAD_0 = "lload_0",
        LLOAD_1 = "lload_1",
        LLOAD_2 = "lload_2",
        LLOAD_3 = "lload_3",
        FLOAD_0 = "fload_0",
        FLOAD_1 = "fload_1",
        FLOAD_2 = "fload_2",
        FLOAD_3 = "fload_3",
        DLOAD_0 = "dload_0",
        DLOAD_1 = "dload_1",
        DLOAD_2 = "dload_2",
        DLOAD_3 = "dload_3",
        ALOAD_0 = "aload_0",
        ALOAD_1 = "aload_1",
        ALOAD_2 = "aload_2",
        ALOAD_3 = "aload_3",
        IALOAD = "iaload",
        LALOAD = "laload",
        FALOAD = "faload",
        DALOAD = "daload",
        AALOAD = "aaload",
        BALOAD = "baload",
        CALOAD = "caload",
        SALOAD = "saload",
        ISTORE = "istore",
        LSTORE = "lstore",
        FSTORE = "fstore",
        DSTORE = "dstore",
        ASTORE = "astore",
        ISTORE_0 = "istore_0",
        ISTORE_1 = "istore_1",
        ISTORE_2 = "istore_2",
        ISTORE_3 = "istore_3",
        LSTORE_0 = "lstore_0",
        LSTORE_1 = "lstore_1",
        LSTORE_2 = "lstore_2",
        LSTORE_3 = "lstore_3",
        FSTORE_0 = "fstore_0",
        FSTORE_1 = "fstore_1",
        FSTORE_2 = "fstore_2",
        FSTORE_3 = "fstore_3",
        DSTORE_0 = "dstore_0",
        DSTORE_1 = "dstore_1",
        DSTORE_2 = "dstore_2",
        DSTORE_3 = "dstore_3",
        ASTORE_0 = "astore_0",
        ASTORE_1 = "astore_1",
        ASTORE_2 = "astore_2",
        ASTORE_3 = "astore_3",
        IASTORE = "iastore",
        LASTORE = "lastore",
        FASTORE = "fastore",
        DASTORE = "dastore",
        AASTORE = "aastore",
        BASTORE = "bastore",
        CASTORE = "castore",
        SASTORE = "sastore",
        POP = "pop",
        POP2 = "pop2",
        DUP = "dup",
        DUP_X1 = "dup_x1",
        DUP_X2 = "dup_x2",
        DUP2 = "dup2",
        DUP2_X1 = "dup2_x1",
        DUP2_X2 = "dup2_x2",
        SWAP = "swap",
        IADD = "iadd",
        LADD = "ladd",
        FADD = "fadd",
        DADD = "dadd",
        ISUB = "isub",
        LSUB = "lsub",
        FSUB = "fsub",
        DSUB = "dsub",
        IMUL = "imul",
        LMUL = "lmul",
        FMUL = "fmul",
        DMUL = "dmul",
        IDIV = "idiv",
        LDIV = "ldiv",
        FDIV = "fdiv",
        DDIV = "ddiv",
        IREM = "irem",
        LREM = "lrem",
        FREM = "frem",
        DREM = "drem",
        INEG = "ineg",
        LNEG = "lneg",
        FNEG = "fneg",
        DNEG = "dneg",
        ISHL = "ishl",
        LSHL = "lshl",
        ISHR = "ishr",
        LSHR = "lshr",
        IUSHR = "iushr",
        LUSHR = "lushr",
        IAND = "iand",
        LAND = "land",
        IOR = "ior",
        LOR = "lor",
        IXOR = "ixor",
        LXOR = "lxor",
        IINC = "iinc",
        I2L = "i2l",
        I2F = "i2f",
        I2D = "i2d",
        L2I = "l2i",
        L2F = "l2f",
        L2D = "l2d",
        F2I = "f2i",
        F2L = "f2l",
        F2D = "f2d",
        D2I = "d2i",
        D2L = "d2l",
        D2F = "d2f",
        I2B = "i2b",
        I2C = "i2c",
        I2S = "i2s",
        LCMP = "lcmp",
        FCMPL = "fcmpl",
        FCMPG = "fcmpg",
        DCMPL = "dcmpl",
        DCMPG = "dcmpg",
        IFEQ = "ifeq",
        IFNE = "ifne",
        IFLT = "iflt",
        IFGE = "ifge",
        IFGT = "ifgt",
        IFLE = "ifle",
        IF_ICMPEQ = "if_icmpeq",
        IF_ICMPNE = "if_icmpne",
        IF_ICMPLT = "if_icmplt",
        IF_ICMPGE = "if_icmpge",
        IF_ICMPGT = "if_icmpgt",
        IF_ICMPLE = "if_icmple",
        IF_ACMPEQ = "if_acmpeq",
        IF_ACMPNE = "if_acmpne",
        GOTO = "goto",
        JSR = "jsr",
        RET = "ret",
        TABLESWITCH = "tableswitch",
        LOOKUPSWITCH = "lookupswitch",
        IRETURN = "ireturn",
        LRETURN = "lreturn",
        FRETURN = "freturn",
        DRETURN = "dreturn",
        ARETURN = "areturn",
        RETURN = "return",
        GETSTATIC = "getstatic",
        PUTSTATIC = "putstatic",
        GETFIELD = "getfield",
        PUTFIELD = "putfield",
        INVOKEVIRTUAL = "invokevirtual",
        INVOKESPECIAL = "invokespecial",
        INVOKESTATIC = "invokestatic",
        INVOKEINTERFACE = "invokeinterface",
        INVOKEDYNAMIC = "invokedynamic",
        NEW = "new",
        NEWARRAY = "newarray",
        ANEWARRAY = "anewarray",
        ARRAYLENGTH = "arraylength",
        ATHROW = "athrow",
        CHECKCAST = "checkcast",
        INSTANCEOF = "instanceof",
        MONITORENTER = "monitorenter",
        MONITOREXIT = "monitorexit",
        WIDE = "wide",
        MULTIANEWARRAY = "multianewarray",
        IFNULL = "ifnull",
        IFNONNULL = "ifnonnull",
        GOTO_W = "goto_w",
        JSR_W = "jsr_w",
    );
}

opcodes! {
    0x00 NOP 1 Plain; 0x01 ACONST_NULL 1 Plain; 0x02 ICONST_M1 1 Plain; 0x03 ICONST_0 1 Plain;
    0x04 ICONST_1 1 Plain; 0x05 ICONST_2 1 Plain; 0x06 ICONST_3 1 Plain; 0x07 ICONST_4 1 Plain;
    0x08 ICONST_5 1 Plain; 0x09 LCONST_0 1 Plain; 0x0a LCONST_1 1 Plain; 0x0b FCONST_0 1 Plain;
    0x0c FCONST_1 1 Plain; 0x0d FCONST_2 1 Plain; 0x0e DCONST_0 1 Plain; 0x0f DCONST_1 1 Plain;
    0x10 BIPUSH 2 Plain; 0x11 SIPUSH 3 Plain; 0x12 LDC 2 Plain; 0x13 LDC_W 3 Plain; 0x14 LDC2_W 3 Plain;
    0x15 ILOAD 2 Plain; 0x16 LLOAD 2 Plain; 0x17 FLOAD 2 Plain; 0x18 DLOAD 2 Plain; 0x19 ALOAD 2 Plain;
    0x1a ILOAD_0 1 Plain; 0x1b ILOAD_1 1 Plain; 0x1c ILOAD_2 1 Plain; 0x1d ILOAD_3 1 Plain;
    0x1e LLOAD_0 1 Plain; 0x1f LLOAD_1 1 Plain; 0x20 LLOAD_2 1 Plain; 0x21 LLOAD_3 1 Plain;
    0x22 FLOAD_0 1 Plain; 0x23 FLOAD_1 1 Plain; 0x24 FLOAD_2 1 Plain; 0x25 FLOAD_3 1 Plain;
    0x26 DLOAD_0 1 Plain; 0x27 DLOAD_1 1 Plain; 0x28 DLOAD_2 1 Plain; 0x29 DLOAD_3 1 Plain;
    0x2a ALOAD_0 1 Plain; 0x2b ALOAD_1 1 Plain; 0x2c ALOAD_2 1 Plain; 0x2d ALOAD_3 1 Plain;
    0x2e IALOAD 1 Plain; 0x2f LALOAD 1 Plain; 0x30 FALOAD 1 Plain; 0x31 DALOAD 1 Plain;
    0x32 AALOAD 1 Plain; 0x33 BALOAD 1 Plain; 0x34 CALOAD 1 Plain; 0x35 SALOAD 1 Plain;
    0x36 ISTORE 2 Plain; 0x37 LSTORE 2 Plain; 0x38 FSTORE 2 Plain; 0x39 DSTORE 2 Plain; 0x3a ASTORE 2 Plain;
    0x3b ISTORE_0 1 Plain; 0x3c ISTORE_1 1 Plain; 0x3d ISTORE_2 1 Plain; 0x3e ISTORE_3 1 Plain;
    0x3f LSTORE_0 1 Plain; 0x40 LSTORE_1 1 Plain; 0x41 LSTORE_2 1 Plain; 0x42 LSTORE_3 1 Plain;
    0x43 FSTORE_0 1 Plain; 0x44 FSTORE_1 1 Plain; 0x45 FSTORE_2 1 Plain; 0x46 FSTORE_3 1 Plain;
    0x47 DSTORE_0 1 Plain; 0x48 DSTORE_1 1 Plain; 0x49 DSTORE_2 1 Plain; 0x4a DSTORE_3 1 Plain;
    0x4b ASTORE_0 1 Plain; 0x4c ASTORE_1 1 Plain; 0x4d ASTORE_2 1 Plain; 0x4e ASTORE_3 1 Plain;
    0x4f IASTORE 1 Plain; 0x50 LASTORE 1 Plain; 0x51 FASTORE 1 Plain; 0x52 DASTORE 1 Plain;
    0x53 AASTORE 1 Plain; 0x54 BASTORE 1 Plain; 0x55 CASTORE 1 Plain; 0x56 SASTORE 1 Plain;
    0x57 POP 1 Plain; 0x58 POP2 1 Plain; 0x59 DUP 1 Plain; 0x5a DUP_X1 1 Plain; 0x5b DUP_X2 1 Plain;
    0x5c DUP2 1 Plain; 0x5d DUP2_X1 1 Plain; 0x5e DUP2_X2 1 Plain; 0x5f SWAP 1 Plain;
    0x60 IADD 1 Plain; 0x61 LADD 1 Plain; 0x62 FADD 1 Plain; 0x63 DADD 1 Plain;
    0x64 ISUB 1 Plain; 0x65 LSUB 1 Plain; 0x66 FSUB 1 Plain; 0x67 DSUB 1 Plain;
    0x68 IMUL 1 Plain; 0x69 LMUL 1 Plain; 0x6a FMUL 1 Plain; 0x6b DMUL 1 Plain;
    0x6c IDIV 1 Plain; 0x6d LDIV 1 Plain; 0x6e FDIV 1 Plain; 0x6f DDIV 1 Plain;
    0x70 IREM 1 Plain; 0x71 LREM 1 Plain; 0x72 FREM 1 Plain; 0x73 DREM 1 Plain;
    0x74 INEG 1 Plain; 0x75 LNEG 1 Plain; 0x76 FNEG 1 Plain; 0x77 DNEG 1 Plain;
    0x78 ISHL 1 Plain; 0x79 LSHL 1 Plain; 0x7a ISHR 1 Plain; 0x7b LSHR 1 Plain;
    0x7c IUSHR 1 Plain; 0x7d LUSHR 1 Plain; 0x7e IAND 1 Plain; 0x7f LAND 1 Plain;
    0x80 IOR 1 Plain; 0x81 LOR 1 Plain; 0x82 IXOR 1 Plain; 0x83 LXOR 1 Plain; 0x84 IINC 3 Plain;
    0x85 I2L 1 Plain; 0x86 I2F 1 Plain; 0x87 I2D 1 Plain; 0x88 L2I 1 Plain; 0x89 L2F 1 Plain;
    0x8a L2D 1 Plain; 0x8b F2I 1 Plain; 0x8c F2L 1 Plain; 0x8d F2D 1 Plain; 0x8e D2I 1 Plain;
    0x8f D2L 1 Plain; 0x90 D2F 1 Plain; 0x91 I2B 1 Plain; 0x92 I2C 1 Plain; 0x93 I2S 1 Plain;
    0x94 LCMP 1 Plain; 0x95 FCMPL 1 Plain; 0x96 FCMPG 1 Plain; 0x97 DCMPL 1 Plain; 0x98 DCMPG 1 Plain;
    0x99 IFEQ 3 Branch16; 0x9a IFNE 3 Branch16; 0x9b IFLT 3 Branch16; 0x9c IFGE 3 Branch16;
    0x9d IFGT 3 Branch16; 0x9e IFLE 3 Branch16; 0x9f IF_ICMPEQ 3 Branch16; 0xa0 IF_ICMPNE 3 Branch16;
    0xa1 IF_ICMPLT 3 Branch16; 0xa2 IF_ICMPGE 3 Branch16; 0xa3 IF_ICMPGT 3 Branch16;
    0xa4 IF_ICMPLE 3 Branch16; 0xa5 IF_ACMPEQ 3 Branch16; 0xa6 IF_ACMPNE 3 Branch16;
    0xa7 GOTO 3 Branch16; 0xa8 JSR 3 Branch16; 0xa9 RET 2 Plain;
    0xaa TABLESWITCH 0 TableSwitch; 0xab LOOKUPSWITCH 0 LookupSwitch;
    0xac IRETURN 1 Plain; 0xad LRETURN 1 Plain; 0xae FRETURN 1 Plain; 0xaf DRETURN 1 Plain;
    0xb0 ARETURN 1 Plain; 0xb1 RETURN 1 Plain;
    0xb2 GETSTATIC 3 Plain; 0xb3 PUTSTATIC 3 Plain; 0xb4 GETFIELD 3 Plain; 0xb5 PUTFIELD 3 Plain;
    0xb6 INVOKEVIRTUAL 3 Plain; 0xb7 INVOKESPECIAL 3 Plain; 0xb8 INVOKESTATIC 3 Plain;
    0xb9 INVOKEINTERFACE 5 Plain; 0xba INVOKEDYNAMIC 5 Plain; 0xbb NEW 3 Plain; 0xbc NEWARRAY 2 Plain;
    0xbd ANEWARRAY 3 Plain; 0xbe ARRAYLENGTH 1 Plain; 0xbf ATHROW 1 Plain; 0xc0 CHECKCAST 3 Plain;
    0xc1 INSTANCEOF 3 Plain; 0xc2 MONITORENTER 1 Plain; 0xc3 MONITOREXIT 1 Plain; 0xc4 WIDE 0 Wide;
    0xc5 MULTIANEWARRAY 4 Plain; 0xc6 IFNULL 3 Branch16; 0xc7 IFNONNULL 3 Branch16;
    0xc8 GOTO_W 5 Branch32; 0xc9 JSR_W 5 Branch32;
}

#[inline]
pub fn name(op: u8) -> &'static str {
    TABLE[op as usize].0
}

#[inline]
pub fn shape(op: u8) -> Shape {
    TABLE[op as usize].2
}

/// True for `ireturn` … `return`.
#[inline]
pub fn is_return(op: u8) -> bool {
    (IRETURN..=RETURN).contains(&op)
}

/// True for the instructions after which control never falls through to the next one.
#[inline]
pub fn ends_flow(op: u8) -> bool {
    matches!(
        op,
        GOTO | GOTO_W | ATHROW | RET | TABLESWITCH | LOOKUPSWITCH
    ) || is_return(op)
}

/// True for conditional branches (`if*`, `ifnull`, `ifnonnull`).
#[inline]
pub fn is_conditional(op: u8) -> bool {
    (IFEQ..=IF_ACMPNE).contains(&op) || op == IFNULL || op == IFNONNULL
}

/// The conditional branch that is taken exactly when `op` is not.
pub fn inverse_condition(op: u8) -> u8 {
    match op {
        IFNULL => IFNONNULL,
        IFNONNULL => IFNULL,
        // ifeq/ifne, iflt/ifge, ifgt/ifle, and the icmp/acmp pairs are adjacent with the even one first
        // counting from ifeq (0x99): flip the low bit of the distance from ifeq.
        _ => IFEQ + ((op - IFEQ) ^ 1),
    }
}

/// The array descriptor a `newarray` with operand `atype` creates (JVMS 6.5, Table 6.5.newarray-A).
pub fn newarray_descriptor(atype: u8) -> Option<&'static [u8]> {
    Some(match atype {
        4 => b"[Z",
        5 => b"[C",
        6 => b"[F",
        7 => b"[D",
        8 => b"[B",
        9 => b"[S",
        10 => b"[I",
        11 => b"[J",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_agrees_with_constants() {
        assert_eq!(name(GOTO_W), "goto_w");
        assert_eq!(TABLE[INVOKEINTERFACE as usize].1, 5);
        assert_eq!(shape(0xca), Shape::Invalid);
    }

    #[test]
    fn inverse_conditions_pair_up() {
        assert_eq!(inverse_condition(IFEQ), IFNE);
        assert_eq!(inverse_condition(IFLT), IFGE);
        assert_eq!(inverse_condition(IFLE), IFGT);
        assert_eq!(inverse_condition(IF_ICMPGE), IF_ICMPLT);
        assert_eq!(inverse_condition(IF_ACMPNE), IF_ACMPEQ);
        assert_eq!(inverse_condition(IFNONNULL), IFNULL);
        for op in (IFEQ..=IF_ACMPNE).chain([IFNULL, IFNONNULL]) {
            assert_eq!(inverse_condition(inverse_condition(op)), op);
        }
    }
}
