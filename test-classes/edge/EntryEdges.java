// Method entry and exit corner cases for code inserted at entry and before returns: a loop whose head is offset 0
// (the back branch must not re-run entry code, and the frame at offset 0 stops being implicit), a handler whose
// range starts at offset 0, methods that are a lone return, methods without code (abstract, native), static and
// instance initialisers that branch, more than 256 locals (wide iload/istore/iinc), and long/double locals.
public class EntryEdges {
    static int entries;

    static {
        int x = Integer.getInteger("edge.unset.property", 3);
        entries = x > 2 ? 100 : -100;
    }

    int field;

    {
        field = entries > 0 ? 1 : 2;
    }

    interface Shape {
        int sides();
    }

    abstract static class Abstract implements Shape {
        abstract int more();

        // never called, never bound: a method without a Code attribute
        static native int neverCalled(int x);
    }

    // do-while: the loop head is the first instruction, so a branch targets offset 0
    static int loopAtEntry(int n) {
        do {
            n -= 3;
        } while (n > 0);
        return n;
    }

    // while(true) at entry with the only exit inside
    static int spin(int[] box) {
        while (true) {
            if (box[0]++ >= 5) return box[0];
        }
    }

    // for(;;) at entry left by an exception
    static int throwOut(int[] box) {
        for (;;) {
            if (box[0]++ > 7) throw new IllegalStateException("out " + box[0]);
        }
    }

    // the try covers offset 0
    static int guarded(Object o) {
        try {
            return o.hashCode() == 0 ? 0 : 1;
        } catch (NullPointerException e) {
            return -1;
        }
    }

    static void empty() {
    }

    static int constant() {
        return 42;
    }

    static long wideValues(long a, double b) {
        long c = a * 3;
        double d = b / 2;
        return c + (long) d;
    }

    // 302 locals: slots above 255 need wide iload/istore/iinc
    static int manyLocals(int n) {
        int v0 = n + 0, v1 = n + 1, v2 = n + 2, v3 = n + 3, v4 = n + 4, v5 = n + 5;
        int v6 = n + 6, v7 = n + 7, v8 = n + 8, v9 = n + 9, v10 = n + 10, v11 = n + 11;
        int v12 = n + 12, v13 = n + 13, v14 = n + 14, v15 = n + 15, v16 = n + 16, v17 = n + 17;
        int v18 = n + 18, v19 = n + 19, v20 = n + 20, v21 = n + 21, v22 = n + 22, v23 = n + 23;
        int v24 = n + 24, v25 = n + 25, v26 = n + 26, v27 = n + 27, v28 = n + 28, v29 = n + 29;
        int v30 = n + 30, v31 = n + 31, v32 = n + 32, v33 = n + 33, v34 = n + 34, v35 = n + 35;
        int v36 = n + 36, v37 = n + 37, v38 = n + 38, v39 = n + 39, v40 = n + 40, v41 = n + 41;
        int v42 = n + 42, v43 = n + 43, v44 = n + 44, v45 = n + 45, v46 = n + 46, v47 = n + 47;
        int v48 = n + 48, v49 = n + 49, v50 = n + 50, v51 = n + 51, v52 = n + 52, v53 = n + 53;
        int v54 = n + 54, v55 = n + 55, v56 = n + 56, v57 = n + 57, v58 = n + 58, v59 = n + 59;
        int v60 = n + 60, v61 = n + 61, v62 = n + 62, v63 = n + 63, v64 = n + 64, v65 = n + 65;
        int v66 = n + 66, v67 = n + 67, v68 = n + 68, v69 = n + 69, v70 = n + 70, v71 = n + 71;
        int v72 = n + 72, v73 = n + 73, v74 = n + 74, v75 = n + 75, v76 = n + 76, v77 = n + 77;
        int v78 = n + 78, v79 = n + 79, v80 = n + 80, v81 = n + 81, v82 = n + 82, v83 = n + 83;
        int v84 = n + 84, v85 = n + 85, v86 = n + 86, v87 = n + 87, v88 = n + 88, v89 = n + 89;
        int v90 = n + 90, v91 = n + 91, v92 = n + 92, v93 = n + 93, v94 = n + 94, v95 = n + 95;
        int v96 = n + 96, v97 = n + 97, v98 = n + 98, v99 = n + 99, v100 = n + 100, v101 = n + 101;
        int v102 = n + 102, v103 = n + 103, v104 = n + 104, v105 = n + 105, v106 = n + 106, v107 = n + 107;
        int v108 = n + 108, v109 = n + 109, v110 = n + 110, v111 = n + 111, v112 = n + 112, v113 = n + 113;
        int v114 = n + 114, v115 = n + 115, v116 = n + 116, v117 = n + 117, v118 = n + 118, v119 = n + 119;
        int v120 = n + 120, v121 = n + 121, v122 = n + 122, v123 = n + 123, v124 = n + 124, v125 = n + 125;
        int v126 = n + 126, v127 = n + 127, v128 = n + 128, v129 = n + 129, v130 = n + 130, v131 = n + 131;
        int v132 = n + 132, v133 = n + 133, v134 = n + 134, v135 = n + 135, v136 = n + 136, v137 = n + 137;
        int v138 = n + 138, v139 = n + 139, v140 = n + 140, v141 = n + 141, v142 = n + 142, v143 = n + 143;
        int v144 = n + 144, v145 = n + 145, v146 = n + 146, v147 = n + 147, v148 = n + 148, v149 = n + 149;
        int v150 = n + 150, v151 = n + 151, v152 = n + 152, v153 = n + 153, v154 = n + 154, v155 = n + 155;
        int v156 = n + 156, v157 = n + 157, v158 = n + 158, v159 = n + 159, v160 = n + 160, v161 = n + 161;
        int v162 = n + 162, v163 = n + 163, v164 = n + 164, v165 = n + 165, v166 = n + 166, v167 = n + 167;
        int v168 = n + 168, v169 = n + 169, v170 = n + 170, v171 = n + 171, v172 = n + 172, v173 = n + 173;
        int v174 = n + 174, v175 = n + 175, v176 = n + 176, v177 = n + 177, v178 = n + 178, v179 = n + 179;
        int v180 = n + 180, v181 = n + 181, v182 = n + 182, v183 = n + 183, v184 = n + 184, v185 = n + 185;
        int v186 = n + 186, v187 = n + 187, v188 = n + 188, v189 = n + 189, v190 = n + 190, v191 = n + 191;
        int v192 = n + 192, v193 = n + 193, v194 = n + 194, v195 = n + 195, v196 = n + 196, v197 = n + 197;
        int v198 = n + 198, v199 = n + 199, v200 = n + 200, v201 = n + 201, v202 = n + 202, v203 = n + 203;
        int v204 = n + 204, v205 = n + 205, v206 = n + 206, v207 = n + 207, v208 = n + 208, v209 = n + 209;
        int v210 = n + 210, v211 = n + 211, v212 = n + 212, v213 = n + 213, v214 = n + 214, v215 = n + 215;
        int v216 = n + 216, v217 = n + 217, v218 = n + 218, v219 = n + 219, v220 = n + 220, v221 = n + 221;
        int v222 = n + 222, v223 = n + 223, v224 = n + 224, v225 = n + 225, v226 = n + 226, v227 = n + 227;
        int v228 = n + 228, v229 = n + 229, v230 = n + 230, v231 = n + 231, v232 = n + 232, v233 = n + 233;
        int v234 = n + 234, v235 = n + 235, v236 = n + 236, v237 = n + 237, v238 = n + 238, v239 = n + 239;
        int v240 = n + 240, v241 = n + 241, v242 = n + 242, v243 = n + 243, v244 = n + 244, v245 = n + 245;
        int v246 = n + 246, v247 = n + 247, v248 = n + 248, v249 = n + 249, v250 = n + 250, v251 = n + 251;
        int v252 = n + 252, v253 = n + 253, v254 = n + 254, v255 = n + 255, v256 = n + 256, v257 = n + 257;
        int v258 = n + 258, v259 = n + 259, v260 = n + 260, v261 = n + 261, v262 = n + 262, v263 = n + 263;
        int v264 = n + 264, v265 = n + 265, v266 = n + 266, v267 = n + 267, v268 = n + 268, v269 = n + 269;
        int v270 = n + 270, v271 = n + 271, v272 = n + 272, v273 = n + 273, v274 = n + 274, v275 = n + 275;
        int v276 = n + 276, v277 = n + 277, v278 = n + 278, v279 = n + 279, v280 = n + 280, v281 = n + 281;
        int v282 = n + 282, v283 = n + 283, v284 = n + 284, v285 = n + 285, v286 = n + 286, v287 = n + 287;
        int v288 = n + 288, v289 = n + 289, v290 = n + 290, v291 = n + 291, v292 = n + 292, v293 = n + 293;
        int v294 = n + 294, v295 = n + 295, v296 = n + 296, v297 = n + 297, v298 = n + 298, v299 = n + 299;
        v299 += 1000;
        v280++;
        int sum = 0;
        for (int i = 0; i < 3; i++) {
            sum += v0 + v100 + v255 + v256 + v280 + v299;
            v290 += sum;
        }
        return sum + v290;
    }

    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder("EntryEdges");
        sb.append(' ').append(loopAtEntry(10)).append(' ').append(loopAtEntry(0));
        sb.append(' ').append(spin(new int[] {0})).append(' ').append(spin(new int[] {9}));
        try {
            throwOut(new int[] {1});
        } catch (IllegalStateException e) {
            sb.append(' ').append(e.getMessage());
        }
        sb.append(' ').append(guarded("")).append(guarded("x")).append(guarded(null));
        empty();
        sb.append(' ').append(constant()).append(' ').append(wideValues(5, 9.0)).append(' ').append(manyLocals(7));
        sb.append(' ').append(entries).append(' ').append(new EntryEdges().field);
        sb.append(' ').append(new Abstract() {
            @Override
            int more() {
                return 2;
            }

            @Override
            public int sides() {
                return 3 + more();
            }
        }.sides());
        System.out.println(sb);
    }
}
