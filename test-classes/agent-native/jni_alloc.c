/* Native half of test-classes/agent/JniAlloc.java: objects made by JNI, with and without a constructor, and a
 * JNI function past the end of JNI 9's table, which the agent's wrapping of the table must keep. */
#include <jni.h>

JNIEXPORT jobject JNICALL Java_JniAlloc_allocObject(JNIEnv *env, jclass self, jclass target) {
    (void) self;
    return (*env)->AllocObject(env, target);
}

JNIEXPORT jobject JNICALL Java_JniAlloc_newObject(JNIEnv *env, jclass self, jclass target) {
    (void) self;
    jmethodID init = (*env)->GetMethodID(env, target, "<init>", "()V");
    return init == NULL ? NULL : (*env)->NewObject(env, target, init);
}

/* IsVirtualThread (JNI 21, the last slot of the table on JDK 21 to 25); -1 where the JDK has no such function. */
JNIEXPORT jint JNICALL Java_JniAlloc_isVirtualThread(JNIEnv *env, jclass self, jobject thread) {
    (void) self;
#ifdef JNI_VERSION_21
    return (*env)->IsVirtualThread(env, thread) ? 1 : 0;
#else
    (void) env;
    (void) thread;
    return -1;
#endif
}
