package org.graalvm.visualvm.lib.jfluid.heap;

import java.io.File;
import java.io.RandomAccessFile;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Opens an HPROF dump with VisualVM's heap library (Debian's visualvm package) and prints what
 * tests/hprof.rs compares, one fact a line:
 *   count CLASS N             instances of each class whose name starts with "Hprof"
 *   marked FIELD VALUE        fields of the HprofLeaf whose baseValue is 4242
 *   static CLASS FIELD VALUE  a few static fields
 *   site CLASS FRAME N        instances of CLASS by the top frame of their allocation trace
 *   thread NAME FRAME...      the stack of each thread root, from the top
 * It lives in the library's package because the library keeps stack traces package-private: its
 * public API shows a thread root's stack but not an instance's allocation trace.
 */
public class HeapCheck {
    public static void main(String[] args) throws Exception {
        File file = new File(args[0]);
        Heap heap = HeapFactory.createHeap(file);
        for (JavaClass c : heap.getAllClasses()) {
            if (c.getName().startsWith("Hprof")) {
                System.out.println("count " + c.getName() + " " + c.getInstancesCount());
            }
        }
        JavaClass leaf = heap.getJavaClassByName("HprofLeaf");
        if (leaf == null) return; // a dump of another program than HprofTarget (HprofApi): its counts only
        for (Instance i : leaf.getInstances()) {
            if (Integer.valueOf(4242).equals(i.getValueOfField("baseValue"))) {
                System.out.println("marked leafValue " + i.getValueOfField("leafValue"));
                System.out.println("marked flag " + i.getValueOfField("flag"));
                System.out.println("marked label " + text(i.getValueOfField("label")));
                Object next = i.getValueOfField("next");
                System.out.println("marked next " + (next instanceof Instance ? ((Instance) next).getJavaClass().getName() : next));
                if (next instanceof PrimitiveArrayInstance) {
                    System.out.println("marked next-values " + ((PrimitiveArrayInstance) next).getValues());
                }
            }
        }
        System.out.println("static HprofTarget statics " + heap.getJavaClassByName("HprofTarget").getValueOfStaticField("statics"));
        System.out.println("static HprofBase baseStatic " + text(heap.getJavaClassByName("HprofBase").getValueOfStaticField("baseStatic")));
        try (RandomAccessFile raf = new RandomAccessFile(file, "r")) {
            for (String name : new String[] {"HprofLeaf", "HprofLeaf[]"}) {
                Map<String, Integer> sites = new TreeMap<>();
                for (Instance i : heap.getJavaClassByName(name).getInstances()) {
                    long serial = traceSerial(raf, (HprofObject) i, i.getInstanceId());
                    StackTrace t = ((HprofHeap) heap).getStackTraceSegment().getStackTraceBySerialNumber(serial);
                    String top = "none";
                    if (t != null && t.getStackFrames().length > 0) {
                        StackFrame f = t.getStackFrames()[0];
                        top = f.getClassName() + "." + f.getMethodName() + ":" + f.getLineNumber();
                    }
                    sites.merge(top, 1, Integer::sum);
                }
                sites.forEach((top, n) -> System.out.println("site " + name + " " + top + " " + n));
            }
        }
        for (GCRoot r : heap.getGCRoots()) {
            if (r instanceof ThreadObjectGCRoot) {
                StringBuilder line = new StringBuilder("thread " + text(r.getInstance().getValueOfField("name")));
                StackTraceElement[] s = ((ThreadObjectGCRoot) r).getStackTrace();
                if (s != null) {
                    for (StackTraceElement e : s) {
                        line.append(' ').append(e.getClassName()).append('.').append(e.getMethodName());
                    }
                }
                System.out.println(line);
            }
        }
    }

    /** An INSTANCE_DUMP or array record is tag u1, id, stack trace serial u4: the library records where
     *  each object is but does not read the serial, so it is read from the file there. */
    static long traceSerial(RandomAccessFile raf, HprofObject o, long id) throws Exception {
        raf.seek(o.fileOffset);
        int tag = raf.readUnsignedByte();
        long readId = raf.readLong();
        if (readId != id) {
            throw new IllegalStateException("record at " + o.fileOffset + " is tag " + tag + " id " + readId + ", not " + id);
        }
        return raf.readInt() & 0xFFFFFFFFL;
    }

    static String text(Object v) {
        if (v instanceof Instance && ((Instance) v).getJavaClass().getName().equals("java.lang.String")) {
            Object value = ((Instance) v).getValueOfField("value");
            if (value instanceof PrimitiveArrayInstance) {
                StringBuilder b = new StringBuilder();
                for (Object x : ((PrimitiveArrayInstance) value).getValues()) {
                    String s = x.toString();
                    b.append(s.length() == 1 ? s.charAt(0) : (char) Integer.parseInt(s));
                }
                return b.toString();
            }
        }
        return String.valueOf(v);
    }
}
