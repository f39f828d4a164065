import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Hand-assembles class files that javac no longer writes, with nothing but DataOutputStream:
 *
 * <pre>
 *   java OldClassGen OUTDIR       writes OUTDIR/OldJsr.class and OUTDIR/CondyConst.class
 *   java OldClassGen OUTDIR old   only OldJsr.class
 * </pre>
 *
 * OldJsr (version 49.0, no StackMapTable, checked by the old type-inferring verifier): subroutines called with jsr
 * and jsr_w and left with ret and wide ret, a finally block compiled the pre-Java-6 way (jsr from the normal exit
 * and from a catch-all handler), goto_w, wide istore/iload/astore/iinc, an array allocation inside a subroutine.
 * main prints "OldJsr subroutines=1019 1013 finally=25 caught=zero counter=2".
 *
 * CondyConst (version 55.0): ldc and ldc2_w of CONSTANT_Dynamic entries (ConstantBootstraps.getStaticFinal for an
 * int and a long, ConstantBootstraps.nullConstant for a String), which javac 17 never emits.
 * main prints "CondyConst 2147483647 9223372036854775807 null".
 *
 * Both load and run with java -Xverify:all.
 */
public final class OldClassGen {

    /** Constant pool with de-duplication. */
    static final class Pool {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final DataOutputStream out = new DataOutputStream(buf);
        final Map<String, Integer> index = new HashMap<>();
        int count = 1;

        private int add(String key, int slots, Body body) {
            Integer have = index.get(key);
            if (have != null) return have;
            try {
                body.write(out);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            index.put(key, count);
            int i = count;
            count += slots;
            return i;
        }

        interface Body {
            void write(DataOutputStream o) throws IOException;
        }

        int utf8(String s) {
            return add("utf8 " + s, 1, o -> { o.writeByte(1); o.writeUTF(s); });
        }

        int cls(String name) {
            int n = utf8(name);
            return add("class " + name, 1, o -> { o.writeByte(7); o.writeShort(n); });
        }

        int string(String s) {
            int u = utf8(s);
            return add("string " + s, 1, o -> { o.writeByte(8); o.writeShort(u); });
        }

        int nameType(String name, String desc) {
            int n = utf8(name), d = utf8(desc);
            return add("nat " + name + " " + desc, 1, o -> { o.writeByte(12); o.writeShort(n); o.writeShort(d); });
        }

        int ref(int tag, String owner, String name, String desc) {
            int c = cls(owner), nt = nameType(name, desc);
            return add("ref" + tag + " " + owner + "." + name + desc, 1, o -> { o.writeByte(tag); o.writeShort(c); o.writeShort(nt); });
        }

        int field(String owner, String name, String desc) {
            return ref(9, owner, name, desc);
        }

        int method(String owner, String name, String desc) {
            return ref(10, owner, name, desc);
        }

        int methodHandle(int kind, int refIndex) {
            return add("mh " + kind + " " + refIndex, 1, o -> { o.writeByte(15); o.writeByte(kind); o.writeShort(refIndex); });
        }

        int dynamic(int bsmIndex, String name, String desc) {
            int nt = nameType(name, desc);
            return add("condy " + bsmIndex + " " + name + desc, 1, o -> { o.writeByte(17); o.writeShort(bsmIndex); o.writeShort(nt); });
        }
    }

    /** Bytecode with labels; short (2-byte) and wide (4-byte) branch offsets are patched by link(). */
    static final class Code {
        final ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final List<int[]> fixups = new ArrayList<>();   // {position of the offset, opcode position, label, width}
        final List<Integer> labels = new ArrayList<>();
        final List<int[]> handlers = new ArrayList<>();  // {start label, end label, handler label, catch type}
        int maxStack, maxLocals;

        Code(int maxStack, int maxLocals) {
            this.maxStack = maxStack;
            this.maxLocals = maxLocals;
        }

        int pos() {
            return buf.size();
        }

        Code op(int... bytes) {
            for (int b : bytes) buf.write(b);
            return this;
        }

        Code ldc(int index) {
            if (index > 255) throw new IllegalStateException("ldc index " + index + " needs ldc_w");
            return op(LDC, index);
        }

        Code u2(int op, int operand) {
            return op(op, operand >> 8, operand & 0xff);
        }

        int label() {
            labels.add(-1);
            return labels.size() - 1;
        }

        Code mark(int label) {
            labels.set(label, pos());
            return this;
        }

        Code branch(int op, int label) {
            int at = pos();
            op(op, 0, 0);
            fixups.add(new int[] {at + 1, at, label, 2});
            return this;
        }

        Code branchWide(int op, int label) {
            int at = pos();
            op(op, 0, 0, 0, 0);
            fixups.add(new int[] {at + 1, at, label, 4});
            return this;
        }

        Code handler(int start, int end, int handler, int catchType) {
            handlers.add(new int[] {start, end, handler, catchType});
            return this;
        }

        byte[] link() {
            byte[] b = buf.toByteArray();
            for (int[] f : fixups) {
                int target = labels.get(f[2]);
                if (target < 0) throw new IllegalStateException("unmarked label");
                int off = target - f[1];
                if (f[3] == 2) {
                    if (off != (short) off) throw new IllegalStateException("short branch out of range");
                    b[f[0]] = (byte) (off >> 8);
                    b[f[0] + 1] = (byte) off;
                } else {
                    for (int k = 0; k < 4; k++) b[f[0] + k] = (byte) (off >> (24 - 8 * k));
                }
            }
            return b;
        }
    }

    static final class ClassFile {
        final Pool pool = new Pool();
        final List<byte[]> fields = new ArrayList<>();
        final List<byte[]> methods = new ArrayList<>();
        final List<byte[]> bootstrapMethods = new ArrayList<>();

        void field(int access, String name, String desc) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            DataOutputStream o = new DataOutputStream(b);
            try {
                o.writeShort(access);
                o.writeShort(pool.utf8(name));
                o.writeShort(pool.utf8(desc));
                o.writeShort(0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            fields.add(b.toByteArray());
        }

        void method(int access, String name, String desc, Code code) {
            byte[] bytes = code.link();
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            DataOutputStream o = new DataOutputStream(b);
            try {
                o.writeShort(access);
                o.writeShort(pool.utf8(name));
                o.writeShort(pool.utf8(desc));
                o.writeShort(1);
                o.writeShort(pool.utf8("Code"));
                o.writeInt(2 + 2 + 4 + bytes.length + 2 + 8 * code.handlers.size() + 2);
                o.writeShort(code.maxStack);
                o.writeShort(code.maxLocals);
                o.writeInt(bytes.length);
                o.write(bytes);
                o.writeShort(code.handlers.size());
                for (int[] h : code.handlers) {
                    o.writeShort(code.labels.get(h[0]));
                    o.writeShort(code.labels.get(h[1]));
                    o.writeShort(code.labels.get(h[2]));
                    o.writeShort(h[3]);
                }
                o.writeShort(0);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            methods.add(b.toByteArray());
        }

        /** Adds a bootstrap method entry and returns its index in the BootstrapMethods attribute. */
        int bootstrap(int methodHandle, int... args) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            DataOutputStream o = new DataOutputStream(b);
            try {
                o.writeShort(methodHandle);
                o.writeShort(args.length);
                for (int a : args) o.writeShort(a);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            bootstrapMethods.add(b.toByteArray());
            return bootstrapMethods.size() - 1;
        }

        byte[] write(int major, String name, String superName) throws IOException {
            int self = pool.cls(name), sup = pool.cls(superName);
            int bsmAttr = bootstrapMethods.isEmpty() ? 0 : pool.utf8("BootstrapMethods");
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            DataOutputStream o = new DataOutputStream(b);
            o.writeInt(0xCAFEBABE);
            o.writeShort(0);
            o.writeShort(major);
            o.writeShort(pool.count);
            o.write(pool.buf.toByteArray());
            o.writeShort(0x0021);   // ACC_PUBLIC | ACC_SUPER
            o.writeShort(self);
            o.writeShort(sup);
            o.writeShort(0);
            o.writeShort(fields.size());
            for (byte[] f : fields) o.write(f);
            o.writeShort(methods.size());
            for (byte[] m : methods) o.write(m);
            if (bootstrapMethods.isEmpty()) {
                o.writeShort(0);
            } else {
                o.writeShort(1);
                o.writeShort(bsmAttr);
                int len = 2;
                for (byte[] e : bootstrapMethods) len += e.length;
                o.writeInt(len);
                o.writeShort(bootstrapMethods.size());
                for (byte[] e : bootstrapMethods) o.write(e);
            }
            return b.toByteArray();
        }
    }

    // opcodes used below
    static final int NOP = 0x00, ICONST_0 = 0x03, ICONST_1 = 0x04, ICONST_3 = 0x06, ICONST_4 = 0x07, ICONST_5 = 0x08,
            BIPUSH = 0x10, LDC = 0x12, LDC2_W = 0x14, ILOAD_0 = 0x1a, ILOAD_1 = 0x1b, ILOAD_2 = 0x1c, ALOAD_0 = 0x2a,
            ALOAD_1 = 0x2b, ALOAD_2 = 0x2c, ISTORE = 0x36, ASTORE = 0x3a, ISTORE_1 = 0x3c, ISTORE_2 = 0x3d,
            ASTORE_1 = 0x4c, ASTORE_2 = 0x4d, ASTORE_3 = 0x4e, POP = 0x57, DUP = 0x59, IADD = 0x60, IDIV = 0x6c,
            IINC = 0x84, IFEQ = 0x99, IFNE = 0x9a, GOTO = 0xa7, JSR = 0xa8, RET = 0xa9, IRETURN = 0xac, RETURN = 0xb1,
            GETSTATIC = 0xb2, PUTSTATIC = 0xb3, INVOKEVIRTUAL = 0xb6, INVOKESPECIAL = 0xb7, INVOKESTATIC = 0xb8,
            NEW = 0xbb, NEWARRAY = 0xbc, ARRAYLENGTH = 0xbe, ATHROW = 0xbf, WIDE = 0xc4, GOTO_W = 0xc8, JSR_W = 0xc9,
            ILOAD = 0x15, T_INT = 10;

    static final String SB = "java/lang/StringBuilder";
    static final String APPEND_S = "(Ljava/lang/String;)Ljava/lang/StringBuilder;";
    static final String APPEND_I = "(I)Ljava/lang/StringBuilder;";

    static byte[] oldJsr() throws IOException {
        ClassFile cf = new ClassFile();
        Pool p = cf.pool;
        cf.field(0x000a, "counter", "I");   // private static
        int counter = p.field("OldJsr", "counter", "I");

        Code init = new Code(1, 1);
        init.op(ALOAD_0).u2(INVOKESPECIAL, p.method("java/lang/Object", "<init>", "()V")).op(RETURN);
        cf.method(0x0001, "<init>", "()V", init);

        // static int subroutines(int n): local 300 = n + 1000, a subroutine adding 7 is called by jsr and by jsr_w,
        // then 1 is taken off when n == 0 (reached by ifeq past a goto_w).
        Code s = new Code(2, 302);
        int sub = s.label(), skip = s.label(), end = s.label();
        s.op(ILOAD_0).op(WIDE, ISTORE, 0x01, 0x2c);                  // wide istore 300
        s.op(WIDE, IINC, 0x01, 0x2c, 0x03, 0xe8);                     // wide iinc 300, 1000
        s.branch(JSR, sub);
        s.branchWide(JSR_W, sub);
        s.op(ILOAD_0).branch(IFEQ, skip);
        s.branchWide(GOTO_W, end);
        s.mark(skip).op(WIDE, IINC, 0x01, 0x2c, 0xff, 0xff);          // wide iinc 300, -1
        s.mark(end).op(WIDE, ILOAD, 0x01, 0x2c).op(IRETURN);          // wide iload 300
        s.mark(sub).op(WIDE, ASTORE, 0x01, 0x2d);                     // wide astore 301 (the return address)
        s.op(ICONST_3, NEWARRAY, T_INT, ARRAYLENGTH, POP);
        s.op(WIDE, IINC, 0x01, 0x2c, 0x00, 0x07);                     // wide iinc 300, 7
        s.op(WIDE, RET, 0x01, 0x2d);                                  // wide ret 301
        cf.method(0x0009, "subroutines", "(I)I", s);

        // static int withFinally(int x) { try { if (x == 0) throw new RuntimeException("zero"); r = 100 / x; }
        //                                  finally { counter++; } return r; }   as javac 1.4 compiled it
        Code f = new Code(3, 4);
        int tryStart = f.label(), ok = f.label(), tryEnd = f.label(), any = f.label(), fin = f.label();
        f.mark(tryStart).op(ILOAD_0).branch(IFNE, ok);
        f.u2(NEW, p.cls("java/lang/RuntimeException")).op(DUP).ldc(p.string("zero"))
         .u2(INVOKESPECIAL, p.method("java/lang/RuntimeException", "<init>", "(Ljava/lang/String;)V")).op(ATHROW);
        f.mark(ok).op(BIPUSH, 100).op(ILOAD_0).op(IDIV).op(ISTORE_1);
        f.mark(tryEnd).branch(JSR, fin).op(ILOAD_1).op(IRETURN);
        f.mark(any).op(ASTORE_2).branch(JSR, fin).op(ALOAD_2).op(ATHROW);
        f.mark(fin).op(ASTORE_3).u2(GETSTATIC, counter).op(ICONST_1).op(IADD).u2(PUTSTATIC, counter).op(RET, 3);
        f.handler(tryStart, tryEnd, any, 0);
        cf.method(0x0009, "withFinally", "(I)I", f);

        // main
        int appendS = p.method(SB, "append", APPEND_S), appendI = p.method(SB, "append", APPEND_I);
        Code m = new Code(3, 3);
        int t0 = m.label(), t1 = m.label(), h = m.label(), after = m.label();
        m.u2(NEW, p.cls(SB)).op(DUP).ldc(p.string("OldJsr subroutines="))
         .u2(INVOKESPECIAL, p.method(SB, "<init>", "(Ljava/lang/String;)V")).op(ASTORE_1);
        m.op(ALOAD_1).op(ICONST_5).u2(INVOKESTATIC, p.method("OldJsr", "subroutines", "(I)I")).u2(INVOKEVIRTUAL, appendI)
         .ldc(p.string(" ")).u2(INVOKEVIRTUAL, appendS)
         .op(ICONST_0).u2(INVOKESTATIC, p.method("OldJsr", "subroutines", "(I)I")).u2(INVOKEVIRTUAL, appendI)
         .ldc(p.string(" finally=")).u2(INVOKEVIRTUAL, appendS)
         .op(ICONST_4).u2(INVOKESTATIC, p.method("OldJsr", "withFinally", "(I)I")).u2(INVOKEVIRTUAL, appendI).op(POP);
        m.mark(t0).op(ICONST_0).u2(INVOKESTATIC, p.method("OldJsr", "withFinally", "(I)I")).op(ISTORE_2)
         .op(ALOAD_1).ldc(p.string(" nocatch=")).u2(INVOKEVIRTUAL, appendS).op(ILOAD_2).u2(INVOKEVIRTUAL, appendI).op(POP);
        m.mark(t1).branch(GOTO, after);
        m.mark(h).op(ASTORE_2).op(ALOAD_1).ldc(p.string(" caught=")).u2(INVOKEVIRTUAL, appendS)
         .op(ALOAD_2).u2(INVOKEVIRTUAL, p.method("java/lang/Throwable", "getMessage", "()Ljava/lang/String;"))
         .u2(INVOKEVIRTUAL, appendS).op(POP);
        m.mark(after).op(ALOAD_1).ldc(p.string(" counter=")).u2(INVOKEVIRTUAL, appendS)
         .u2(GETSTATIC, counter).u2(INVOKEVIRTUAL, appendI).op(POP);
        m.u2(GETSTATIC, p.field("java/lang/System", "out", "Ljava/io/PrintStream;")).op(ALOAD_1)
         .u2(INVOKEVIRTUAL, p.method(SB, "toString", "()Ljava/lang/String;"))
         .u2(INVOKEVIRTUAL, p.method("java/io/PrintStream", "println", "(Ljava/lang/String;)V")).op(RETURN);
        m.handler(t0, t1, h, p.cls("java/lang/RuntimeException"));
        cf.method(0x0009, "main", "([Ljava/lang/String;)V", m);
        return cf.write(49, "OldJsr", "java/lang/Object");
    }

    static byte[] condyConst() throws IOException {
        ClassFile cf = new ClassFile();
        Pool p = cf.pool;
        String lookupDesc = "Ljava/lang/invoke/MethodHandles$Lookup;";
        int getStaticFinal = p.methodHandle(6, p.method("java/lang/invoke/ConstantBootstraps", "getStaticFinal",
                "(" + lookupDesc + "Ljava/lang/String;Ljava/lang/Class;Ljava/lang/Class;)Ljava/lang/Object;"));
        int nullConstant = p.methodHandle(6, p.method("java/lang/invoke/ConstantBootstraps", "nullConstant",
                "(" + lookupDesc + "Ljava/lang/String;Ljava/lang/Class;)Ljava/lang/Object;"));
        int intMax = p.dynamic(cf.bootstrap(getStaticFinal, p.cls("java/lang/Integer")), "MAX_VALUE", "I");
        int longMax = p.dynamic(cf.bootstrap(getStaticFinal, p.cls("java/lang/Long")), "MAX_VALUE", "J");
        int nothing = p.dynamic(cf.bootstrap(nullConstant), "nothing", "Ljava/lang/String;");

        Code init = new Code(1, 1);
        init.op(ALOAD_0).u2(INVOKESPECIAL, p.method("java/lang/Object", "<init>", "()V")).op(RETURN);
        cf.method(0x0001, "<init>", "()V", init);

        int appendS = p.method(SB, "append", APPEND_S);
        Code m = new Code(4, 1);
        m.u2(GETSTATIC, p.field("java/lang/System", "out", "Ljava/io/PrintStream;"));
        m.u2(NEW, p.cls(SB)).op(DUP).ldc(p.string("CondyConst "))
         .u2(INVOKESPECIAL, p.method(SB, "<init>", "(Ljava/lang/String;)V"));
        m.ldc(intMax).u2(INVOKEVIRTUAL, p.method(SB, "append", APPEND_I));
        m.ldc(p.string(" ")).u2(INVOKEVIRTUAL, appendS);
        m.u2(LDC2_W, longMax).u2(INVOKEVIRTUAL, p.method(SB, "append", "(J)Ljava/lang/StringBuilder;"));
        m.ldc(p.string(" ")).u2(INVOKEVIRTUAL, appendS);
        m.ldc(nothing).u2(INVOKEVIRTUAL, appendS);
        m.u2(INVOKEVIRTUAL, p.method(SB, "toString", "()Ljava/lang/String;"))
         .u2(INVOKEVIRTUAL, p.method("java/io/PrintStream", "println", "(Ljava/lang/String;)V")).op(RETURN);
        cf.method(0x0009, "main", "([Ljava/lang/String;)V", m);
        return cf.write(55, "CondyConst", "java/lang/Object");
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 2 || (args.length == 2 && !args[1].equals("old"))) {
            System.err.println("usage: OldClassGen OUTDIR [old]");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]);
        Files.createDirectories(dir);
        Files.write(dir.resolve("OldJsr.class"), oldJsr());
        if (args.length == 1) Files.write(dir.resolve("CondyConst.class"), condyConst());
    }
}
