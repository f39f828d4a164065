// tableswitch and lookupswitch at every alignment (the switch opcode at offset 1, 2, 3 and 4 mod 4), so that the
// 0-3 padding bytes after the opcode change whenever a byte is inserted before them; string and enum switches,
// switch expressions, switches after array allocations and early returns in the same method, nested switches.
public class Switches {
    enum Dir { NORTH, EAST, SOUTH, WEST }

    // switch opcode at 1 (iload_0): pad 2
    static int table1(int x) {
        switch (x) {
            case 0: return 10;
            case 1: return 11;
            case 2: return 12;
            case 3: return 13;
            case 4: return 14;
            default: return -1;
        }
    }

    // at 2 (iload_0 ineg): pad 1
    static int table2(int x) {
        switch (-x) {
            case -4: return 24;
            case -3: return 23;
            case -2: return 22;
            case -1: return 21;
            case 0: return 20;
            default: return -2;
        }
    }

    // at 3 (iload_0 iload_1 iadd): pad 0
    static int table3(int x, int y) {
        switch (x + y) {
            case 5: return 35;
            case 6: return 36;
            case 7: return 37;
            case 8: return 38;
            default: return -3;
        }
    }

    // at 4 (iload_0 bipush ixor): pad 3
    static int table4(int x) {
        switch (x ^ 100) {
            case 100: return 40;
            case 101: return 41;
            case 102: return 42;
            case 103: return 43;
            default: return -4;
        }
    }

    static int lookup1(int x) {
        switch (x) {
            case -1000: return 1;
            case 7: return 2;
            case 5000: return 3;
            case 1 << 20: return 4;
            default: return 0;
        }
    }

    static int lookup2(int x) {
        switch (-x) {
            case -1000: return 1;
            case -7: return 2;
            case 5000: return 3;
            default: return 0;
        }
    }

    static int lookup3(int x, int y) {
        switch (x + y) {
            case 10: return 1;
            case 1000: return 2;
            case 100000: return 3;
            default: return 0;
        }
    }

    static int lookup4(int x) {
        switch (x ^ 100) {
            case 0: return 1;
            case 999: return 2;
            case 123456: return 3;
            default: return 0;
        }
    }

    // Several switches in one method, separated by array allocations and returns: each nop inserted before one
    // switch shifts the next by a different amount.
    static int chained(int x) {
        int[] a = new int[x & 7];
        int r;
        switch (a.length) {
            case 0: r = 1; break;
            case 1: r = 2; break;
            case 2: r = 3; break;
            default: r = 4;
        }
        if (x == 999) return -999;
        long[] b = new long[r];
        switch (b.length * 1000) {
            case 1000: r += 10; break;
            case 3000: r += 30; break;
            case 200000: r += 50; break;
            default: r += 70;
        }
        if (x == 998) return -998;
        Object[][] c = new Object[r % 3 + 1][2];
        switch (c.length) {
            case 1: r *= 2; break;
            case 2: r *= 3; break;
            case 3: r *= 5; break;
            default: r = 0;
        }
        return r;
    }

    // A switch inside a loop: the back branch crosses it.
    static int inLoop(int n) {
        int acc = 0;
        for (int i = 0; i < n; i++) {
            switch (i % 6) {
                case 0: acc += 1; break;
                case 1: acc += new byte[i].length; break;
                case 2: acc ^= 7; continue;
                case 3: if (acc > 1000) return acc; acc *= 2; break;
                case 4: acc -= 3;
                    // fall through
                case 5: acc += i; break;
            }
            acc += 1;
        }
        return acc;
    }

    static String strings(String s) {
        switch (s) {
            case "alpha": return "A";
            case "beta": return "B";
            case "Aa": return "collides-1";      // "Aa" and "BB" share a hashCode
            case "BB": return "collides-2";
            default: return "?";
        }
    }

    static int enums(Dir d) {
        switch (d) {
            case NORTH: return 0;
            case EAST: return 90;
            case SOUTH: return 180;
            default: return 270;
        }
    }

    static String expr(int x) {
        return switch (x % 5) {
            case 0, 1 -> "low";
            case 2 -> {
                int[] t = new int[x];
                yield "mid" + t.length;
            }
            case 3 -> "high";
            default -> {
                if (x < 0) yield "neg";
                yield "other";
            }
        };
    }

    static int nested(int a, int b) {
        switch (a) {
            case 1:
                switch (b) {
                    case 1: return 11;
                    case 2: return 12;
                    case 3: return 13;
                    default: return 10;
                }
            case 2:
                switch (b * 100) {
                    case 100: return 21;
                    case 5000: return 22;
                    default: return 20;
                }
            default:
                return 0;
        }
    }

    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder("Switches");
        for (int i = -2; i < 7; i++) sb.append(' ').append(table1(i)).append('/').append(table2(i));
        for (int i = 3; i < 10; i++) sb.append(' ').append(table3(i, 1)).append('/').append(table4(i - 4));
        for (int v : new int[] {-1000, 7, 5000, 1 << 20, 3}) sb.append(' ').append(lookup1(v)).append(lookup2(v));
        sb.append(' ').append(lookup3(5, 5)).append(lookup3(999, 1)).append(lookup3(99999, 1)).append(lookup4(100));
        for (int i = 0; i < 12; i++) sb.append(' ').append(chained(i));
        sb.append(' ').append(chained(999)).append(' ').append(chained(998));
        sb.append(' ').append(inLoop(10)).append(' ').append(inLoop(100));
        for (String s : new String[] {"alpha", "beta", "Aa", "BB", "gamma"}) sb.append(' ').append(strings(s));
        for (Dir d : Dir.values()) sb.append(' ').append(enums(d));
        for (int i = -3; i < 6; i++) sb.append(' ').append(expr(i));
        sb.append(' ').append(nested(1, 2)).append(nested(2, 50)).append(nested(2, 1)).append(nested(3, 3));
        System.out.println(sb);
    }
}
