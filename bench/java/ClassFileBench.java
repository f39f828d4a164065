import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassModel;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.CodeElement;
import java.lang.classfile.CodeTransform;
import java.lang.classfile.instruction.NewMultiArrayInstruction;
import java.lang.classfile.instruction.NewPrimitiveArrayInstruction;
import java.lang.classfile.instruction.NewReferenceArrayInstruction;
import java.lang.classfile.instruction.ReturnInstruction;
import java.lang.constant.ClassDesc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * JDK ClassFile API (java.lang.classfile, final in JDK 24) side of instr's rewriter benchmark (spawned by the Rust
 * binary `rewriter-bench`; needs a JDK >= 24 to compile and run).
 *
 * <pre>
 *   java -cp DIR ClassFileBench --mode copy|nop|nop-dropmaps [--warmup N] [--passes N] CORPUS_DIR
 * </pre>
 *
 * Same methodology as AsmBench: every *.class under CORPUS_DIR (module-info included) preloaded, single thread,
 * WARMUP untimed passes, best of PASSES timed passes. Each timed unit is parse + transform + write.
 *
 * <ul>
 *   <li>copy: {@code transformClass(parse(bytes), ClassTransform.ACCEPT_ALL)} - identity transform.</li>
 *   <li>nop: a CodeTransform inserting {@code nop()} at code start, before every return instruction and after every
 *       NewPrimitiveArray / NewReferenceArray / NewMultiArray instruction, default options. The API cannot keep or
 *       shift existing StackMapTable frames of a changed method: with the default STACK_MAPS_WHEN_REQUIRED it
 *       regenerates them (data-flow analysis, class hierarchy needed; we give it the corpus' hierarchy, built outside
 *       the timed part, falling back to the running JDK's resources).</li>
 *   <li>nop-dropmaps: same transform with StackMapsOption.DROP_STACK_MAPS (the only alternative to generating;
 *       no frames at all, so the output of version >= 50 classes does not verify). Informational: the cost of the
 *       API without stack map generation.</li>
 * </ul>
 *
 * Output: progress lines, then {@code RESULT tool=classfile mode=... classes=N errors=E seconds=S mb=M out_mb=O
 * stackmaps=...} and up to 5 {@code ERROR path: message} lines.
 */
public final class ClassFileBench {
    private ClassFileBench() {}

    /** Inserts the benchmark's NOPs; the code start is handled by {@link #atStart}. */
    static final class NopTransform implements CodeTransform {
        @Override
        public void atStart(CodeBuilder builder) {
            builder.nop();
        }

        @Override
        public void accept(CodeBuilder builder, CodeElement element) {
            if (element instanceof ReturnInstruction) {
                builder.nop();
                builder.with(element);
            } else if (element instanceof NewPrimitiveArrayInstruction
                    || element instanceof NewReferenceArrayInstruction
                    || element instanceof NewMultiArrayInstruction) {
                builder.with(element);
                builder.nop();
            } else {
                builder.with(element);
            }
        }
    }

    /**
     * One pass over the corpus (a method of its own so the JIT compiles it normally rather than on-stack-replacing
     * main's loop). counts[0] += output bytes, counts[1] += errors; the first errors go to {@code errors} if given.
     */
    static void runPass(ClassFile cf, ClassTransform transform, byte[][] classes, String[] names, long[] counts, List<String> errors) {
        long out = 0;
        long errs = 0;
        for (int i = 0; i < classes.length; i++) {
            try {
                out += cf.transformClass(cf.parse(classes[i]), transform).length;
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
        if (root == null || mode == null || !List.of("copy", "nop", "nop-dropmaps").contains(mode) || passes < 1
                || warmup < 0) {
            System.err.println("usage: ClassFileBench --mode copy|nop|nop-dropmaps [--warmup N] [--passes N] CORPUS_DIR");
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

        // Class hierarchy of the corpus (untimed), for stack map generation; unknown classes fall back to the
        // running JDK's own class files.
        Map<ClassDesc, ClassDesc> supers = new HashMap<>();
        Set<ClassDesc> interfaces = new HashSet<>();
        ClassFile plain = ClassFile.of();
        for (byte[] b : classes) {
            try {
                ClassModel m = plain.parse(b);
                if (m.isModuleInfo()) {
                    continue;
                }
                ClassDesc self = m.thisClass().asSymbol();
                if ((m.flags().flagsMask() & ClassFile.ACC_INTERFACE) != 0) {
                    interfaces.add(self);
                } else if (m.superclass().isPresent()) {
                    supers.put(self, m.superclass().get().asSymbol());
                }
            } catch (RuntimeException e) {
                // reported by the timed passes
            }
        }
        ClassHierarchyResolver resolver =
                ClassHierarchyResolver.of(interfaces, supers).orElse(ClassHierarchyResolver.defaultResolver()).cached();

        String stackMaps;
        ClassFile cf;
        ClassTransform transform;
        switch (mode) {
            case "copy":
                cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver));
                transform = ClassTransform.ACCEPT_ALL;
                stackMaps = "passed-through(unchanged-code)";
                break;
            case "nop":
                cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver));
                transform = ClassTransform.transformingMethodBodies(new NopTransform());
                stackMaps = "generated(STACK_MAPS_WHEN_REQUIRED)";
                break;
            default:
                cf = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(resolver),
                        ClassFile.StackMapsOption.DROP_STACK_MAPS);
                transform = ClassTransform.transformingMethodBodies(new NopTransform());
                stackMaps = "dropped(DROP_STACK_MAPS)";
        }
        System.out.printf("classfile %s: %d classes, %.1f MB, %d warm-up + %d timed passes, java %s, stack maps %s%n",
                mode, classes.length, inBytes / 1e6, warmup, passes, System.getProperty("java.version"), stackMaps);

        double best = Double.MAX_VALUE;
        long outBytes = 0;
        int errors = 0;
        List<String> firstErrors = new ArrayList<>();
        for (int pass = 0; pass < warmup + passes; pass++) {
            long[] counts = new long[2];
            long t0 = System.nanoTime();
            runPass(cf, transform, classes, names, counts, pass == 0 ? firstErrors : null);
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
        System.out.printf("RESULT tool=classfile mode=%s classes=%d errors=%d seconds=%.6f mb=%.3f out_mb=%.3f stackmaps=%s%n",
                mode, classes.length, errors, best, inBytes / 1e6, outBytes / 1e6, stackMaps);
        for (String e : firstErrors) {
            System.out.println("ERROR " + e);
        }
    }
}
