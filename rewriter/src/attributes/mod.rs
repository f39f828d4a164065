//! Structured models of the attributes that hold bytecode offsets. Every other attribute stays raw bytes.

pub mod code;
pub mod debug_tables;
pub mod stack_map;
pub mod type_annotations;

/// Attribute names the rewriter understands, as they appear in the constant pool.
pub mod names {
    pub const CODE: &[u8] = b"Code";
    pub const STACK_MAP_TABLE: &[u8] = b"StackMapTable";
    pub const LINE_NUMBER_TABLE: &[u8] = b"LineNumberTable";
    pub const LOCAL_VARIABLE_TABLE: &[u8] = b"LocalVariableTable";
    pub const LOCAL_VARIABLE_TYPE_TABLE: &[u8] = b"LocalVariableTypeTable";
    pub const RUNTIME_VISIBLE_TYPE_ANNOTATIONS: &[u8] = b"RuntimeVisibleTypeAnnotations";
    pub const RUNTIME_INVISIBLE_TYPE_ANNOTATIONS: &[u8] = b"RuntimeInvisibleTypeAnnotations";
}
