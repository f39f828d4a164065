import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Deadlocks on purpose: two threads on two monitors (dl2-a, dl2-b on Deadlocks$A, Deadlocks$B), three
 * threads on three monitors (dl3-a, dl3-b, dl3-c on Deadlocks$X, $Y, $Z) and two threads on two
 * ReentrantLocks (juc-a, juc-b). Prints "deadlocked" once every thread holds its first lock and has
 * started to take the second, then waits forever: the test ends the JVM.
 */
public class Deadlocks {
    static final class A {}
    static final class B {}
    static final class X {}
    static final class Y {}
    static final class Z {}

    static Thread monitorCycle(String name, Object first, Object second, CyclicBarrier barrier) {
        Thread t = new Thread(() -> {
            synchronized (first) {
                await(barrier);
                synchronized (second) {
                    System.out.println("unexpected: " + name + " got both");
                }
            }
        }, name);
        t.start();
        return t;
    }

    static Thread lockCycle(String name, ReentrantLock first, ReentrantLock second, CyclicBarrier barrier) {
        Thread t = new Thread(() -> {
            first.lock();
            try {
                await(barrier);
                second.lock();
                second.unlock();
            } finally {
                first.unlock();
            }
        }, name);
        t.start();
        return t;
    }

    static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        A a = new A();
        B b = new B();
        CyclicBarrier two = new CyclicBarrier(2);
        Thread[] all = {
            monitorCycle("dl2-a", a, b, two),
            monitorCycle("dl2-b", b, a, two),
            null, null, null, null, null,
        };
        X x = new X();
        Y y = new Y();
        Z z = new Z();
        CyclicBarrier three = new CyclicBarrier(3);
        all[2] = monitorCycle("dl3-a", x, y, three);
        all[3] = monitorCycle("dl3-b", y, z, three);
        all[4] = monitorCycle("dl3-c", z, x, three);
        ReentrantLock l1 = new ReentrantLock();
        ReentrantLock l2 = new ReentrantLock();
        CyclicBarrier juc = new CyclicBarrier(2);
        all[5] = lockCycle("juc-a", l1, l2, juc);
        all[6] = lockCycle("juc-b", l2, l1, juc);
        for (Thread t : all) {
            while (t.getState() != Thread.State.BLOCKED && t.getState() != Thread.State.WAITING) {
                Thread.sleep(1);
            }
        }
        System.out.println("deadlocked");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
