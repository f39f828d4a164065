import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes well-formed class files that HotSpot must refuse to link, plus controls, so that a test can show that
 * ForceLink really fails on bad bytecode. Hand-assembled with DataOutputStream only.
 *
 * <pre>
 *   java MakeBroken DIR            loader-mode fixtures, default package:
 *        BrokenFrame   StackMapTable frame says local 0 is an Object where it holds an int     -> VERIFY
 *        BrokenBranch  ifeq whose offset points past the end of the code                     -> VERIFY
 *        BrokenMidInsn goto into the middle of an sipush                                     -> VERIFY
 *        NoFrame       version 52 branch target without a StackMapTable frame                -> VERIFY
 *        BrokenReturn  areturn of an int                                                     -> VERIFY
 *        BrokenOld     the same in a version 49 class (old type-inferring verifier)          -> VERIFY
 *        Truncated     a good class file cut short                                           -> FORMAT
 *        NoSuper       superclass that exists nowhere                                        -> MISSING
 *        Fine          correct class with a branch and frame; its static initialiser calls
 *                      System.exit(42), so exit status 42 means the harness ran a clinit      -> OK
 *   java MakeBroken --boot DIR     JDK-layout fixtures: DIR/java.base/java/util/ForceLinkBroken.class (VERIFY)
 *                                  and DIR/java.base/java/util/ForceLinkFine.class (OK)
 *   java MakeBroken --boot-regressed DIR    the same two classes, both broken: compared with --boot's output,
 *                                  ForceLinkFine is a class that "linked before and fails after"
 * </pre>
 */
public final class MakeBroken {

    /** Just enough of a class file writer: a constant pool with de-duplication, and methods with raw code. */
    static final class ClassBytes {
        private final ByteArrayOutputStream poolBuf = new ByteArrayOutputStream();
        private final DataOutputStream pool = new DataOutputStream(poolBuf);
        private final Map<String, Integer> seen = new HashMap<>();
        private int next = 1;
        private final List<byte[]> methods = new ArrayList<>();

        private int entry(String key, int tag, byte[] body) {
            Integer have = seen.get(key);
            if (have != null) return have;
            try {
                pool.writeByte(tag);
                pool.write(body);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            seen.put(key, next);
            return next++;
        }

        private static byte[] u2s(int... vals) {
            byte[] b = new byte[vals.length * 2];
            for (int i = 0; i < vals.length; i++) {
                b[2 * i] = (byte) (vals[i] >> 8);
                b[2 * i + 1] = (byte) vals[i];
            }
            return b;
        }

        int utf8(String s) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            try {
                new DataOutputStream(b).writeUTF(s);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
            return entry("U" + s, 1, b.toByteArray());
        }

        int classRef(String internalName) {
            int u = utf8(internalName);
            return entry("C" + internalName, 7, u2s(u));
        }

        int nameAndType(String name, String desc) {
            int n = utf8(name), d = utf8(desc);
            return entry("N" + name + ":" + desc, 12, u2s(n, d));
        }

        int methodRef(String owner, String name, String desc) {
            int c = classRef(owner), nt = nameAndType(name, desc);
            return entry("M" + owner + "." + name + desc, 10, u2s(c, nt));
        }

        /** Adds a method; stackMap is the body of a StackMapTable attribute (count first), or null for none. */
        void method(int access, String name, String desc, int maxStack, int maxLocals, byte[] code, byte[] stackMap) {
            try {
                ByteArrayOutputStream mb = new ByteArrayOutputStream();
                DataOutputStream m = new DataOutputStream(mb);
                m.writeShort(access);
                m.writeShort(utf8(name));
                m.writeShort(utf8(desc));
                m.writeShort(1);                               // attributes: Code
                ByteArrayOutputStream cb = new ByteArrayOutputStream();
                DataOutputStream c = new DataOutputStream(cb);
                c.writeShort(maxStack);
                c.writeShort(maxLocals);
                c.writeInt(code.length);
                c.write(code);
                c.writeShort(0);                               // exception table
                if (stackMap == null) {
                    c.writeShort(0);
                } else {
                    c.writeShort(1);
                    c.writeShort(utf8("StackMapTable"));
                    c.writeInt(stackMap.length);
                    c.write(stackMap);
                }
                m.writeShort(utf8("Code"));
                m.writeInt(cb.size());
                m.write(cb.toByteArray());
                methods.add(mb.toByteArray());
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }

        byte[] build(int major, String name, String superName) {
            int thisIdx = classRef(name);
            int superIdx = classRef(superName);
            try {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                DataOutputStream o = new DataOutputStream(out);
                o.writeInt(0xCAFEBABE);
                o.writeShort(0);
                o.writeShort(major);
                o.writeShort(next);
                o.write(poolBuf.toByteArray());
                o.writeShort(0x0021);                         // public super
                o.writeShort(thisIdx);
                o.writeShort(superIdx);
                o.writeShort(0);                              // interfaces
                o.writeShort(0);                              // fields
                o.writeShort(methods.size());
                for (byte[] m : methods) o.write(m);
                o.writeShort(0);                              // class attributes
                return out.toByteArray();
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final int ACC_PUBLIC_STATIC = 0x0009;

    /** A public no-argument constructor calling super's. */
    static void defaultCtor(ClassBytes cb, String superName) {
        int init = cb.methodRef(superName, "<init>", "()V");
        cb.method(0x0001, "<init>", "()V", 1, 1,
                new byte[] {0x2a, (byte) 0xb7, (byte) (init >> 8), (byte) init, (byte) 0xb1}, null);
    }

    /** iload_0; ifeq +5; iconst_1; ireturn; L6: iconst_0; ireturn  (code is 8 bytes, L6 needs a frame) */
    static final byte[] BRANCHY = {0x1a, (byte) 0x99, 0x00, 0x05, 0x04, (byte) 0xac, 0x03, (byte) 0xac};

    static byte[] fine(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        // same_frame at offset 6 (frame_type 6 = offset_delta 6)
        cb.method(ACC_PUBLIC_STATIC, "pick", "(I)I", 1, 1, BRANCHY, new byte[] {0x00, 0x01, 0x06});
        int exit = cb.methodRef("java/lang/System", "exit", "(I)V");
        cb.method(0x0008, "<clinit>", "()V", 1, 0,
                new byte[] {0x10, 42, (byte) 0xb8, (byte) (exit >> 8), (byte) exit, (byte) 0xb1}, null);
        return cb.build(52, name, "java/lang/Object");
    }

    static byte[] brokenFrame(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        int object = cb.classRef("java/lang/Object");
        // full_frame (255) at offset 6: locals [Object], stack []
        byte[] smt = {0x00, 0x01, (byte) 255, 0x00, 0x06, 0x00, 0x01, 0x07, (byte) (object >> 8), (byte) object, 0x00, 0x00};
        cb.method(ACC_PUBLIC_STATIC, "pick", "(I)I", 1, 1, BRANCHY, smt);
        return cb.build(52, name, "java/lang/Object");
    }

    static byte[] brokenBranch(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        byte[] code = BRANCHY.clone();
        code[3] = 0x70;                                       // ifeq +112: far past the 8-byte code
        cb.method(ACC_PUBLIC_STATIC, "pick", "(I)I", 1, 1, code, new byte[] {0x00, 0x01, 0x06});
        return cb.build(52, name, "java/lang/Object");
    }

    static byte[] brokenMidInstruction(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        // 0: iload_0  1: ifeq +6 (-> 7)  4: sipush 0x00ac  7: ireturn ... then: goto -3 into the sipush operand
        // 0 iload_0; 1 ifeq ->8; 4 sipush 1000; 7 ireturn; 8 goto -3 (-> 5, inside sipush)
        byte[] code = {0x1a, (byte) 0x99, 0x00, 0x07, 0x11, 0x03, (byte) 0xe8, (byte) 0xac, (byte) 0xa7, (byte) 0xff, (byte) 0xfd};
        cb.method(ACC_PUBLIC_STATIC, "pick", "(I)I", 1, 1, code, new byte[] {0x00, 0x01, 0x08});
        return cb.build(52, name, "java/lang/Object");
    }

    static byte[] noFrame(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        cb.method(ACC_PUBLIC_STATIC, "pick", "(I)I", 1, 1, BRANCHY, null);
        return cb.build(52, name, "java/lang/Object");
    }

    static byte[] brokenReturn(String name, int major) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "java/lang/Object");
        cb.method(ACC_PUBLIC_STATIC, "get", "()Ljava/lang/Object;", 1, 0, new byte[] {0x03, (byte) 0xb0}, null);
        return cb.build(major, name, "java/lang/Object");
    }

    static byte[] noSuper(String name) {
        ClassBytes cb = new ClassBytes();
        defaultCtor(cb, "NoSuchSuperclassAnywhere");
        return cb.build(52, name, "NoSuchSuperclassAnywhere");
    }

    static void write(Path dir, String internalName, byte[] bytes) throws IOException {
        Path p = dir.resolve(internalName + ".class");
        Files.createDirectories(p.getParent());
        Files.write(p, bytes);
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 2 && (args[0].equals("--boot") || args[0].equals("--boot-regressed"))) {
            Path base = Paths.get(args[1]).resolve("java.base");
            write(base, "java/util/ForceLinkBroken", brokenReturn("java/util/ForceLinkBroken", 52));
            write(base, "java/util/ForceLinkFine", args[0].equals("--boot")
                    ? fine("java/util/ForceLinkFine") : brokenFrame("java/util/ForceLinkFine"));
            return;
        }
        if (args.length != 1) {
            System.err.println("usage: MakeBroken DIR | MakeBroken --boot DIR | MakeBroken --boot-regressed DIR");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]);
        write(dir, "BrokenFrame", brokenFrame("BrokenFrame"));
        write(dir, "BrokenBranch", brokenBranch("BrokenBranch"));
        write(dir, "BrokenMidInsn", brokenMidInstruction("BrokenMidInsn"));
        write(dir, "NoFrame", noFrame("NoFrame"));
        write(dir, "BrokenReturn", brokenReturn("BrokenReturn", 52));
        write(dir, "BrokenOld", brokenReturn("BrokenOld", 49));
        byte[] good = fine("Truncated");
        byte[] cut = new byte[good.length - 9];
        System.arraycopy(good, 0, cut, 0, cut.length);
        write(dir, "Truncated", cut);
        write(dir, "NoSuper", noSuper("NoSuper"));
        write(dir, "Fine", fine("Fine"));
    }
}
