import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * ASM side of instr's rewriter benchmark (spawned by the Rust binary `rewriter-bench`).
 *
 * <pre>
 *   java -cp asm.jar:DIR AsmBench --mode copy|nop [--warmup N] [--passes N] CORPUS_DIR
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
 * </ul>
 *
 * Output: human-readable progress lines, then one machine-readable line:
 * <pre>RESULT tool=asm mode=nop classes=N errors=E seconds=S mb=M out_mb=O</pre>
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
     * main's loop). counts[0] += output bytes, counts[1] += errors; the first errors go to {@code errors} if given.
     */
    static void runPass(boolean isNop, byte[][] classes, String[] names, long[] counts, List<String> errors) {
        long out = 0;
        long errs = 0;
        for (int i = 0; i < classes.length; i++) {
            try {
                out += (isNop ? nop(classes[i]) : copy(classes[i])).length;
            } catch (RuntimeException | LinkageError | AssertionError e) {
                errs++;
                if (errors != null && errors.size() < 5) {
                    errors.add(names[i] + ": " + e);
                }
            }
        }
        counts[0] += out;
        counts[1] += errs;
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
        if (root == null || !("copy".equals(mode) || "nop".equals(mode)) || passes < 1 || warmup < 0) {
            System.err.println("usage: AsmBench --mode copy|nop [--warmup N] [--passes N] CORPUS_DIR");
            System.exit(2);
        }
        boolean isNop = "nop".equals(mode);

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
        for (int pass = 0; pass < warmup + passes; pass++) {
            long[] counts = new long[2];
            long t0 = System.nanoTime();
            runPass(isNop, classes, names, counts, pass == 0 ? firstErrors : null);
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
        }
        System.out.printf("RESULT tool=asm mode=%s classes=%d errors=%d seconds=%.6f mb=%.3f out_mb=%.3f%n",
                mode, classes.length, errors, best, inBytes / 1e6, outBytes / 1e6);
        for (String e : firstErrors) {
            System.out.println("ERROR " + e);
        }
    }
}
