import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Label;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.AdviceAdapter;

/**
 * ASM side of instr's rewriter benchmark (spawned by the Rust binary `rewriter-bench`).
 *
 * <pre>
 *   java -cp asm.jar:asm-commons.jar:DIR AsmBench --mode copy|nop|probes|probes-advice [--warmup N] [--passes N] CORPUS_DIR
 * </pre>
 *
 * Every *.class file under CORPUS_DIR (module-info included) is read into memory first. Then, single-threaded,
 * WARMUP untimed passes and PASSES timed passes run over all of them; the best timed pass is reported.
 *
 * <ul>
 *   <li>copy: ClassReader -> ClassWriter(reader, 0), no adapter (ASM copies unchanged method bodies through).</li>
 *   <li>nop: ClassReader -> adapter -> ClassWriter(reader, COMPUTE_MAXS). The adapter inserts NOP at method entry, before
 *       every xRETURN/RETURN and after every NEWARRAY/ANEWARRAY/MULTIANEWARRAY. StackMapTable frames are kept as
 *       read (no EXPAND_FRAMES, no COMPUTE_FRAMES): ASM re-encodes them at the shifted offsets.</li>
 *   <li>probes: the insertions of instr's Instrumenter with every probe on (see {@link ProbesMethod}):
 *       ClassReader -> adapter -> ClassWriter(reader, COMPUTE_MAXS), accept(.., 0): frames kept as read, as in nop.
 *       The constructor's super()/this() call is found by the adapter itself (NEW / INVOKESPECIAL &lt;init&gt;
 *       bracketing), without asm-commons.</li>
 *   <li>probes-advice: the same insertions made with asm-commons' AdviceAdapter (onMethodEnter/onMethodExit).
 *       AdviceAdapter is a LocalVariablesSorter, which only accepts expanded frames, so this mode reads with
 *       EXPAND_FRAMES (ClassWriter(reader, COMPUTE_MAXS) still, no COMPUTE_FRAMES).</li>
 * </ul>
 *
 * Output: human-readable progress lines, then one machine-readable line:
 * <pre>RESULT tool=asm mode=nop classes=N errors=E seconds=S mb=M out_mb=O [method_ids=I site_ids=J]</pre>
 * (mb = input size in 10^6 bytes, seconds = best timed pass), and up to 5 lines {@code ERROR path: message}.
 */
public final class AsmBench {
    private AsmBench() {}

    /** Method adapter making the benchmark's NOP insertions. */
    static final class NopMethod extends MethodVisitor {
        NopMethod(MethodVisitor next) {
            super(Opcodes.ASM9, next);
        }

        @Override
        public void visitCode() {
            super.visitCode();
            super.visitInsn(Opcodes.NOP);
        }

        @Override
        public void visitInsn(int opcode) {
            if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN) {
                super.visitInsn(Opcodes.NOP);
            }
            super.visitInsn(opcode);
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            super.visitIntInsn(opcode, operand);
            if (opcode == Opcodes.NEWARRAY) {
                super.visitInsn(Opcodes.NOP);
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.ANEWARRAY) {
                super.visitInsn(Opcodes.NOP);
            }
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int dims) {
            super.visitMultiANewArrayInsn(descriptor, dims);
            super.visitInsn(Opcodes.NOP);
        }
    }

    /** Class adapter wrapping every method's visitor in {@link NopMethod}. */
    static final class NopClass extends ClassVisitor {
        NopClass(ClassVisitor next) {
            super(Opcodes.ASM9, next);
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            return mv == null ? null : new NopMethod(mv);
        }
    }


    // -----------------------------------------------------------------------------------------------------------
    // probes: the insertions of instr's Instrumenter (Selection Everything, Flavour Native)

    static final String PROXY = "java/lang/HeapProxy";
    static final String[] NEWARRAY_TYPES = {null, null, null, null, "[Z", "[C", "[F", "[D", "[B", "[S", "[I", "[J"};

    /** An array allocation site (instr: SiteInfo). */
    static final class Site {
        final int id;
        final int method;
        final int index;
        final int line;
        final String arrayType;

        Site(int id, int method, int index, int line, String arrayType) {
            this.id = id;
            this.method = method;
            this.index = index;
            this.line = line;
            this.arrayType = arrayType;
        }
    }

    /** Method and site ids, one table per pass (instr: one IdRegistry per pass). Ids start at 1. */
    static final class Ids {
        final HashMap<String, Integer> methodIds = new HashMap<>();
        final ArrayList<String> methods = new ArrayList<>();
        final HashMap<Long, Integer> siteIds = new HashMap<>();
        final ArrayList<Site> sites = new ArrayList<>();

        int methodId(String owner, String name, String desc) {
            String key = owner + "." + name + desc;
            Integer id = methodIds.get(key);
            if (id != null) {
                return id;
            }
            methods.add(key);
            int fresh = methods.size();
            methodIds.put(key, fresh);
            return fresh;
        }

        /** ASM has no instruction offsets: sites are keyed by (method id, index of the allocation in the method). */
        int siteId(int method, int index, int line, int opcode, int operand, String type) {
            Long key = ((long) method << 32) | index;
            Integer id = siteIds.get(key);
            if (id != null) {
                return id;
            }
            String arrayType;
            if (opcode == Opcodes.NEWARRAY) {
                arrayType = operand >= 4 && operand <= 11 ? NEWARRAY_TYPES[operand] : "[?";
            } else if (opcode == Opcodes.ANEWARRAY) {
                arrayType = type.startsWith("[") ? "[" + type : "[L" + type + ";";
            } else {
                arrayType = type;
            }
            int fresh = sites.size() + 1;
            sites.add(new Site(fresh, method, index, line, arrayType));
            siteIds.put(key, fresh);
            return fresh;
        }
    }

    /** The shortest instruction pushing {@code v} (ICONST_n, BIPUSH, SIPUSH or LDC), as instr's push_int. */
    static void pushInt(MethodVisitor mv, int v) {
        if (v >= 0 && v <= 5) {
            mv.visitInsn(Opcodes.ICONST_0 + v);
        } else if (v <= Byte.MAX_VALUE) {
            mv.visitIntInsn(Opcodes.BIPUSH, v);
        } else if (v <= Short.MAX_VALUE) {
            mv.visitIntInsn(Opcodes.SIPUSH, v);
        } else {
            mv.visitLdcInsn(v);
        }
    }

    static void callProxy(MethodVisitor mv, String name, String desc) {
        mv.visitMethodInsn(Opcodes.INVOKESTATIC, PROXY, name, desc, false);
    }

    /** Per-method state shared by both probe adapters; inserted code goes straight to {@code out}. */
    static final class ProbeState {
        final Ids ids;
        final String owner;
        final String name;
        final String desc;
        final int major;
        final boolean objectInit;     // java/lang/Object.<init>: allocation probe only, no method probes
        final boolean constructor;    // <init> of any other class: entry probe after super()/this()
        final boolean methodProbes;   // entry/exit/unwind probes (instr: method_probes_forbidden is None)
        MethodVisitor out;
        int methodId;
        int allocations;              // running index of the array allocation in the method
        int line = -1;                // last line number seen (instr: the line of the site's pc)
        Label start;                  // set once the entry probe is in

        ProbeState(Ids ids, String owner, String name, String desc, int major) {
            this.ids = ids;
            this.owner = owner;
            this.name = name;
            this.desc = desc;
            this.major = major;
            this.objectInit = owner.equals("java/lang/Object") && name.equals("<init>");
            this.constructor = !objectInit && name.equals("<init>");
            // instr's exclusions: Object.<init> (allocation probe only) and jdk/internal/misc/Unsafe (HeapProxy's
            // atomics) get no method probes; their array allocations still get theirs.
            this.methodProbes = !objectInit && !owner.equals("jdk/internal/misc/Unsafe");
        }

        /** Every method with method probes gets an id at visitCode; the others at their first array allocation. */
        void assignId() {
            if (methodProbes) {
                methodId = ids.methodId(owner, name, desc);
            }
        }

        /** At the entry of java/lang/Object.<init>()V: `aload_0; objectAlloc`. */
        void objectAlloc() {
            if (objectInit && desc.equals("()V")) {
                out.visitVarInsn(Opcodes.ALOAD, 0);
                callProxy(out, "objectAlloc", "(Ljava/lang/Object;)V");
            }
        }

        /** `push id; methodEnter`, then the start of the catch-all range. */
        void enter() {
            if (!methodProbes || start != null) {
                return;
            }
            pushInt(out, methodId);
            callProxy(out, "methodEnter", "(I)V");
            start = new Label();
            out.visitLabel(start);
        }

        void beforeInsn(int opcode) {
            if (opcode >= Opcodes.IRETURN && opcode <= Opcodes.RETURN && methodProbes) {
                pushInt(out, methodId);
                callProxy(out, "methodExit", "(I)V");
            }
        }

        /** After NEWARRAY / ANEWARRAY / MULTIANEWARRAY: `dup; push site; arrayAlloc`. */
        void array(int opcode, int operand, String type) {
            if (methodId == 0) {
                methodId = ids.methodId(owner, name, desc);
            }
            int site = ids.siteId(methodId, allocations++, line, opcode, operand, type);
            out.visitInsn(Opcodes.DUP);
            pushInt(out, site);
            callProxy(out, "arrayAlloc", "(Ljava/lang/Object;I)V");
        }

        /**
         * The catch-all handler, at the end of the code: `push id; methodUnwind; athrow`. Its table entry is
         * added here, after the method's own (ClassReader visits those right after visitCode, i.e. after a
         * non-constructor's entry probe), so the method's handlers still catch first.
         */
        void handler(boolean expandedFrames) {
            if (start == null) {
                return;
            }
            Label end = new Label();
            Label handler = new Label();
            out.visitTryCatchBlock(start, end, handler, null);
            out.visitLabel(end);
            out.visitLabel(handler);
            if (major >= Opcodes.V1_6) {
                out.visitFrame(expandedFrames ? Opcodes.F_NEW : Opcodes.F_FULL, 0, new Object[0], 1,
                        new Object[] {"java/lang/Throwable"});
            }
            pushInt(out, methodId);
            callProxy(out, "methodUnwind", "(I)V");
            out.visitInsn(Opcodes.ATHROW);
        }
    }

    /**
     * probes without asm-commons: a plain MethodVisitor, frames not expanded. In a constructor the entry probe
     * goes right after the INVOKESPECIAL &lt;init&gt; that is not matched by an earlier NEW (javac's code nests
     * NEW ... INVOKESPECIAL &lt;init&gt; pairs, so this finds the super()/this() call).
     */
    static final class ProbesMethod extends MethodVisitor {
        final ProbeState s;
        int pendingNews;

        ProbesMethod(MethodVisitor next, ProbeState s) {
            super(Opcodes.ASM9, next);
            this.s = s;
            s.out = next;
        }

        @Override
        public void visitCode() {
            super.visitCode();
            s.assignId();
            s.objectAlloc();
            if (!s.constructor) {
                s.enter();
            }
        }

        @Override
        public void visitInsn(int opcode) {
            s.beforeInsn(opcode);
            super.visitInsn(opcode);
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            super.visitIntInsn(opcode, operand);
            if (opcode == Opcodes.NEWARRAY) {
                s.array(opcode, operand, null);
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.ANEWARRAY) {
                s.array(opcode, 0, type);
            } else if (opcode == Opcodes.NEW && s.constructor && s.start == null) {
                pendingNews++;
            }
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int dims) {
            super.visitMultiANewArrayInsn(descriptor, dims);
            s.array(Opcodes.MULTIANEWARRAY, dims, descriptor);
        }

        @Override
        public void visitMethodInsn(int opcode, String owner, String name, String desc, boolean itf) {
            super.visitMethodInsn(opcode, owner, name, desc, itf);
            if (s.constructor && s.start == null && opcode == Opcodes.INVOKESPECIAL && name.equals("<init>")) {
                if (pendingNews > 0) {
                    pendingNews--;
                } else {
                    s.enter();
                }
            }
        }

        @Override
        public void visitLineNumber(int line, Label start) {
            super.visitLineNumber(line, start);
            s.line = line;
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            s.handler(false);
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    /**
     * probes-advice: the same insertions with asm-commons' AdviceAdapter (onMethodEnter runs after super()/this()
     * in constructors). Inserted code bypasses the adapter's stack simulation (it goes to {@code mv}).
     */
    static final class ProbesAdvice extends AdviceAdapter {
        final ProbeState s;

        ProbesAdvice(MethodVisitor next, ProbeState s, int access) {
            super(Opcodes.ASM9, next, access, s.name, s.desc);
            this.s = s;
            s.out = next;
        }

        @Override
        public void visitCode() {
            s.assignId();   // before AdviceAdapter.visitCode, which calls onMethodEnter in a non-constructor
            super.visitCode();
            s.objectAlloc();   // Object.<init> counts as a constructor for AdviceAdapter: no onMethodEnter
        }

        @Override
        protected void onMethodEnter() {
            s.enter();
        }

        @Override
        protected void onMethodExit(int opcode) {
            if (opcode != Opcodes.ATHROW) {
                s.beforeInsn(opcode);
            }
        }

        @Override
        public void visitIntInsn(int opcode, int operand) {
            super.visitIntInsn(opcode, operand);
            if (opcode == Opcodes.NEWARRAY) {
                s.array(opcode, operand, null);
            }
        }

        @Override
        public void visitTypeInsn(int opcode, String type) {
            super.visitTypeInsn(opcode, type);
            if (opcode == Opcodes.ANEWARRAY) {
                s.array(opcode, 0, type);
            }
        }

        @Override
        public void visitMultiANewArrayInsn(String descriptor, int dims) {
            super.visitMultiANewArrayInsn(descriptor, dims);
            s.array(Opcodes.MULTIANEWARRAY, dims, descriptor);
        }

        @Override
        public void visitLineNumber(int line, Label start) {
            super.visitLineNumber(line, start);
            s.line = line;
        }

        @Override
        public void visitMaxs(int maxStack, int maxLocals) {
            s.handler(true);
            super.visitMaxs(maxStack, maxLocals);
        }
    }

    /** Class adapter for both probe modes. HeapProxy and its nested classes are left alone, as instr does. */
    static final class ProbesClass extends ClassVisitor {
        final Ids ids;
        final boolean advice;
        String owner;
        int major;
        boolean skip;

        ProbesClass(ClassVisitor next, Ids ids, boolean advice) {
            super(Opcodes.ASM9, next);
            this.ids = ids;
            this.advice = advice;
        }

        @Override
        public void visit(int version, int access, String name, String sig, String superName, String[] interfaces) {
            super.visit(version, access, name, sig, superName, interfaces);
            owner = name;
            major = version & 0xFFFF;
            skip = name.equals(PROXY) || name.startsWith(PROXY + "$");
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] exceptions) {
            MethodVisitor mv = super.visitMethod(access, name, desc, sig, exceptions);
            if (mv == null || skip) {
                return mv;
            }
            ProbeState s = new ProbeState(ids, owner, name, desc, major);
            return advice ? new ProbesAdvice(mv, s, access) : new ProbesMethod(mv, s);
        }
    }

    static byte[] probes(byte[] in, Ids ids) {
        ClassReader reader = new ClassReader(in);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        reader.accept(new ProbesClass(writer, ids, false), 0);
        return writer.toByteArray();
    }

    static byte[] probesAdvice(byte[] in, Ids ids) {
        ClassReader reader = new ClassReader(in);
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        // AdviceAdapter (a LocalVariablesSorter) throws on compressed frames: it needs EXPAND_FRAMES.
        reader.accept(new ProbesClass(writer, ids, true), ClassReader.EXPAND_FRAMES);
        return writer.toByteArray();
    }

    static byte[] copy(byte[] in) {
        ClassReader reader = new ClassReader(in);
        ClassWriter writer = new ClassWriter(reader, 0);
        reader.accept(writer, 0);
        return writer.toByteArray();
    }

    static byte[] nop(byte[] in) {
        ClassReader reader = new ClassReader(in);
        // Passing the reader lets ASM copy the constant pool as is (the usual agent set-up; instr keeps the pool too).
        ClassWriter writer = new ClassWriter(reader, ClassWriter.COMPUTE_MAXS);
        reader.accept(new NopClass(writer), 0);
        return writer.toByteArray();
    }

    /**
     * One pass over the corpus (a method of its own so the JIT compiles it normally rather than on-stack-replacing
     * main's loop). counts[0] += output bytes, counts[1] += errors, counts[2..3] = method and site ids assigned; the first errors go to {@code errors} if given.
     */
    static void runPass(String mode, byte[][] classes, String[] names, long[] counts, List<String> errors) {
        long out = 0;
        long errs = 0;
        // One id table per pass, created inside the timed part (instr: one IdRegistry per pass).
        Ids ids = new Ids();
        for (int i = 0; i < classes.length; i++) {
            try {
                byte[] result;
                switch (mode) {
                    case "copy": result = copy(classes[i]); break;
                    case "nop": result = nop(classes[i]); break;
                    case "probes": result = probes(classes[i], ids); break;
                    default: result = probesAdvice(classes[i], ids); break;
                }
                out += result.length;
            } catch (RuntimeException | LinkageError | AssertionError e) {
                errs++;
                if (errors != null && errors.size() < 5) {
                    errors.add(names[i] + ": " + e);
                }
            }
        }
        counts[0] += out;
        counts[1] += errs;
        counts[2] = ids.methods.size();
        counts[3] = ids.sites.size();
    }

    static List<Path> classFiles(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".class") && Files.isRegularFile(p))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    public static void main(String[] args) throws Exception {
        String mode = null;
        int warmup = 3;
        int passes = 3;
        Path root = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--mode": mode = args[++i]; break;
                case "--warmup": warmup = Integer.parseInt(args[++i]); break;
                case "--passes": passes = Integer.parseInt(args[++i]); break;
                default: root = Paths.get(args[i]);
            }
        }
        List<String> modes = List.of("copy", "nop", "probes", "probes-advice");
        if (root == null || !modes.contains(mode) || passes < 1 || warmup < 0) {
            System.err.println("usage: AsmBench --mode copy|nop|probes|probes-advice [--warmup N] [--passes N] CORPUS_DIR");
            System.exit(2);
        }

        List<Path> files = classFiles(root);
        byte[][] classes = new byte[files.size()][];
        String[] names = new String[files.size()];
        long inBytes = 0;
        for (int i = 0; i < classes.length; i++) {
            classes[i] = Files.readAllBytes(files.get(i));
            names[i] = root.relativize(files.get(i)).toString();
            inBytes += classes[i].length;
        }
        System.out.printf("asm %s: %d classes, %.1f MB, %d warm-up + %d timed passes, java %s%n",
                mode, classes.length, inBytes / 1e6, warmup, passes, System.getProperty("java.version"));

        double best = Double.MAX_VALUE;
        long outBytes = 0;
        int errors = 0;
        List<String> firstErrors = new ArrayList<>();
        long[] idCounts = new long[2];
        for (int pass = 0; pass < warmup + passes; pass++) {
            long[] counts = new long[4];
            long t0 = System.nanoTime();
            runPass(mode, classes, names, counts, pass == 0 ? firstErrors : null);
            double secs = (System.nanoTime() - t0) / 1e9;
            long out = counts[0];
            int errs = (int) counts[1];
            boolean timed = pass >= warmup;
            System.out.printf("  %s pass %d: %.3f s%n", timed ? "timed" : "warm-up", timed ? pass - warmup + 1 : pass + 1, secs);
            if (timed && secs < best) {
                best = secs;
            }
            outBytes = out;
            errors = errs;
            idCounts[0] = counts[2];
            idCounts[1] = counts[3];
        }
        String ids = mode.startsWith("probes") ? String.format(" method_ids=%d site_ids=%d", idCounts[0], idCounts[1]) : "";
        System.out.printf("RESULT tool=asm mode=%s classes=%d errors=%d seconds=%.6f mb=%.3f out_mb=%.3f%s%n",
                mode, classes.length, errors, best, inBytes / 1e6, outBytes / 1e6, ids);
        for (String e : firstErrors) {
            System.out.println("ERROR " + e);
        }
    }
}
