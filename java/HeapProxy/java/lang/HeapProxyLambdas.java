/*
 * The classes the JDK's lambda factory made, by caller and factory arguments, so that a lambda site linked
 * again after its class was redefined gets the class it had before, as the JDK does for a lambda class it
 * finds in its class-data archive. Without this, every start and stop of a probe at run time gave each lambda
 * of each redefined class a new class, and code the redefinition left alone (HashMap.merge, Iterable.forEach,
 * the streams) saw one more receiver class at each call: past two, C2 stops inlining the lambda there, for
 * the life of the JVM (rewriter/src/probes/lambda_classes.rs; bench/README.md, 2026-11-28).
 *
 * libinstr.so defines this class beside HeapProxy and patches InnerClassLambdaMetafactory.spinInnerClass, at
 * the first run-time start of a probe, to call classFor where it called generateInnerClass. It patches only
 * once ready() has answered 1, so classFor can always make a class.
 *
 * What is reused: only classes whose caller can never unload (the boot, platform and application loaders, not
 * hidden), so that the table holds no class loader alive; and only when the JDK itself would look in its
 * archive (eager initialisation, no implementation handle passed as class data). Two factories ask for the
 * same class when their caller, interface, interface method, factory and method types, implementation (kind,
 * class, name, type), serializability, extra interfaces and bridges are the same: the class spun for one is
 * then exactly what the other would have spun, and a site that calls the caller's own lambda body calls the
 * body's current version, since a redefinition relinks every reference to a redefined method.
 *
 * The table is open-addressed over two arrays, grown by doubling; the arrays this class allocates carry no
 * probe (the rewriter never instruments HeapProxy*), so keeping the table counts nothing the program did not
 * allocate.
 */
package java.lang;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import jdk.internal.misc.Unsafe;

public final class HeapProxyLambdas {
    private HeapProxyLambdas() {}

    private static final Unsafe U = Unsafe.getUnsafe();
    private static final String FACTORY_NAME = "java.lang.invoke.InnerClassLambdaMetafactory";

    /** The factory's generateInnerClass(), typed (Object)Class; null when it cannot be found (never patched). */
    private static final MethodHandle GENERATE = generator();
    /** False under -Djdk.internal.lambda.disableEagerInitialization, where the JDK spins a class per link. */
    private static final boolean EAGER = eager();

    /**
     * The instance fields of AbstractValidatingLambdaMetafactory, the factory's inputs, as JDK 17 to 25 declare
     * them. A JDK that declares others may make a lambda's class depend on them, which same() would not see,
     * and one that changed a type would have Unsafe read a field as what it is not: either way the factory is
     * left unpatched.
     */
    private static final String[] INPUTS = {
        "caller java.lang.invoke.MethodHandles$Lookup", "targetClass java.lang.Class",
        "factoryType java.lang.invoke.MethodType", "interfaceClass java.lang.Class",
        "interfaceMethodName java.lang.String", "interfaceMethodType java.lang.invoke.MethodType",
        "implementation java.lang.invoke.MethodHandle", "implMethodType java.lang.invoke.MethodType",
        "implInfo java.lang.invoke.MethodHandleInfo", "implKind int", "implIsInstanceMethod boolean",
        "implClass java.lang.Class", "dynamicMethodType java.lang.invoke.MethodType", "isSerializable boolean",
        "altInterfaces java.lang.Class[]", "altMethods java.lang.invoke.MethodType[]",
    };
    private static final boolean INPUTS_KNOWN = inputsKnown();

    // The factory's fields (AbstractValidatingLambdaMetafactory, InnerClassLambdaMetafactory); -1 if missing.
    private static final long TARGET = offset("targetClass");
    private static final long INTERFACE = offset("interfaceClass");
    private static final long NAME = offset("interfaceMethodName");
    private static final long FACTORY_TYPE = offset("factoryType");
    private static final long METHOD_TYPE = offset("interfaceMethodType");
    private static final long IMPL_KIND = offset("implKind");
    private static final long IMPL_CLASS = offset("implClass");
    private static final long IMPL_TYPE = offset("implMethodType");
    private static final long IMPL_INFO = offset("implInfo");
    private static final long DYNAMIC_TYPE = offset("dynamicMethodType");
    private static final long SERIALIZABLE = offset("isSerializable");
    private static final long ALT_INTERFACES = offset("altInterfaces");
    private static final long ALT_METHODS = offset("altMethods");
    private static final long IMPL_HANDLE = booleanOffset("useImplMethodHandle");

    private static final ClassLoader PLATFORM = ClassLoader.getPlatformClassLoader();
    private static final ClassLoader SYSTEM = ClassLoader.getSystemClassLoader();

    private static final Object LOCK = new Object[0];
    /** By hash slot: the factory that made the class (its fields are the key), and the class. */
    private static Object[] factories = new Object[256];
    private static Class<?>[] classes = new Class<?>[256];
    private static int held;

    /** 1 when classFor can stand in for generateInnerClass on this JDK (the agent patches only then), else 0. */
    public static int ready() {
        return GENERATE != null && INPUTS_KNOWN && TARGET >= 0 && INTERFACE >= 0 && NAME >= 0 && FACTORY_TYPE >= 0
                && METHOD_TYPE >= 0 && IMPL_KIND >= 0 && IMPL_CLASS >= 0 && IMPL_TYPE >= 0 && IMPL_INFO >= 0
                && DYNAMIC_TYPE >= 0 && SERIALIZABLE >= 0 && ALT_INTERFACES >= 0 && ALT_METHODS >= 0
                && IMPL_HANDLE >= 0 ? 1 : 0;
    }

    /** How many classes the table holds (instr.Counts, tests). */
    public static int classesHeld() {
        synchronized (LOCK) {
            return held;
        }
    }

    /** What the patched spinInnerClass calls in place of generateInnerClass(). */
    public static Class<?> classFor(Object factory) throws Throwable {
        if (!reusable(factory)) {
            return (Class<?>) GENERATE.invokeExact(factory);
        }
        int hash = hash(factory);
        synchronized (LOCK) {
            Class<?> known = find(factory, hash);
            if (known != null) return known;
        }
        // Outside the lock: spinning a class links other call sites, which may come back here.
        Class<?> made = (Class<?>) GENERATE.invokeExact(factory);
        synchronized (LOCK) {
            Class<?> known = find(factory, hash);
            if (known != null) return known; // another thread linked the same lambda first: one class for both
            if (2 * (held + 1) > factories.length) grow();
            insert(factory, made, hash);
            held++;
        }
        return made;
    }

    private static boolean reusable(Object f) {
        if (!EAGER || U.getBoolean(f, IMPL_HANDLE)) return false;
        Class<?> caller = (Class<?>) U.getReference(f, TARGET);
        if (caller.isHidden()) return false;
        ClassLoader loader = caller.getClassLoader();
        return loader == null || loader == PLATFORM || loader == SYSTEM;
    }

    private static int hash(Object f) {
        int h = System.identityHashCode(U.getReference(f, TARGET));
        h = 31 * h + ((String) U.getReference(f, NAME)).hashCode();
        h = 31 * h + ((MethodHandleInfo) U.getReference(f, IMPL_INFO)).getName().hashCode();
        return h ^ (h >>> 16);
    }

    private static Class<?> find(Object f, int hash) {
        int mask = factories.length - 1;
        for (int i = hash & mask; factories[i] != null; i = (i + 1) & mask) {
            if (same(factories[i], f)) return classes[i];
        }
        return null;
    }

    private static void insert(Object f, Class<?> c, int hash) {
        int mask = factories.length - 1;
        int i = hash & mask;
        while (factories[i] != null) i = (i + 1) & mask;
        factories[i] = f;
        classes[i] = c;
    }

    private static void grow() {
        Object[] oldFactories = factories;
        Class<?>[] oldClasses = classes;
        factories = new Object[2 * oldFactories.length];
        classes = new Class<?>[2 * oldClasses.length];
        for (int i = 0; i < oldFactories.length; i++) {
            if (oldFactories[i] != null) insert(oldFactories[i], oldClasses[i], hash(oldFactories[i]));
        }
    }

    /** Whether two factories would spin the same class: every argument the class's bytes depend on. */
    private static boolean same(Object a, Object b) {
        return U.getReference(a, TARGET) == U.getReference(b, TARGET)
                && U.getReference(a, INTERFACE) == U.getReference(b, INTERFACE)
                && U.getReference(a, IMPL_CLASS) == U.getReference(b, IMPL_CLASS)
                && U.getInt(a, IMPL_KIND) == U.getInt(b, IMPL_KIND)
                && U.getBoolean(a, SERIALIZABLE) == U.getBoolean(b, SERIALIZABLE)
                && U.getReference(a, NAME).equals(U.getReference(b, NAME))
                && ((MethodHandleInfo) U.getReference(a, IMPL_INFO)).getName()
                        .equals(((MethodHandleInfo) U.getReference(b, IMPL_INFO)).getName())
                && U.getReference(a, FACTORY_TYPE).equals(U.getReference(b, FACTORY_TYPE))
                && U.getReference(a, METHOD_TYPE).equals(U.getReference(b, METHOD_TYPE))
                && U.getReference(a, IMPL_TYPE).equals(U.getReference(b, IMPL_TYPE))
                && U.getReference(a, DYNAMIC_TYPE).equals(U.getReference(b, DYNAMIC_TYPE))
                && sameElements((Object[]) U.getReference(a, ALT_INTERFACES), (Object[]) U.getReference(b, ALT_INTERFACES))
                && sameElements((Object[]) U.getReference(a, ALT_METHODS), (Object[]) U.getReference(b, ALT_METHODS));
    }

    private static boolean sameElements(Object[] a, Object[] b) {
        if (a == b) return true;
        if (a == null || b == null || a.length != b.length) return false;
        for (int i = 0; i < a.length; i++) {
            if (!a[i].equals(b[i])) return false;
        }
        return true;
    }

    private static Class<?> factoryClass() {
        try {
            return Class.forName(FACTORY_NAME, false, null);
        } catch (Throwable t) {
            return null;
        }
    }

    // Reflection made accessible, not privateLookupIn: no Lookup may be made in java.lang.invoke but the
    // JDK's own, and setAccessible is allowed within java.base.
    private static MethodHandle generator() {
        try {
            java.lang.reflect.Method generate = factoryClass().getDeclaredMethod("generateInnerClass");
            generate.setAccessible(true);
            return MethodHandles.lookup().unreflect(generate)
                    .asType(MethodType.methodType(Class.class, Object.class));
        } catch (Throwable t) {
            return null;
        }
    }

    private static boolean eager() {
        try {
            java.lang.reflect.Field disabled = factoryClass().getDeclaredField("disableEagerInitialization");
            disabled.setAccessible(true);
            return !disabled.getBoolean(null);
        } catch (Throwable t) {
            return false;
        }
    }

    /** The offset of a field of the factory's superclass; -1 when this JDK has no such field. */
    private static long offset(String name) {
        try {
            Class<?> f = factoryClass();
            return U.objectFieldOffset(f.getSuperclass(), name);
        } catch (Throwable t) {
            return -1;
        }
    }

    /** The offset of the factory's own boolean field `name`; -1 when it has none, or not a boolean. */
    private static long booleanOffset(String name) {
        try {
            java.lang.reflect.Field field = factoryClass().getDeclaredField(name);
            return field.getType() == boolean.class ? U.objectFieldOffset(field) : -1;
        } catch (Throwable t) {
            return -1;
        }
    }

    /** Whether the superclass's instance fields are exactly INPUTS, by name and type. */
    private static boolean inputsKnown() {
        try {
            java.util.Set<String> declared = new java.util.HashSet<>();
            for (java.lang.reflect.Field field : factoryClass().getSuperclass().getDeclaredFields()) {
                if (!java.lang.reflect.Modifier.isStatic(field.getModifiers())) {
                    declared.add(field.getName() + " " + field.getType().getTypeName());
                }
            }
            return declared.equals(java.util.Set.of(INPUTS));
        } catch (Throwable t) {
            return false;
        }
    }
}
