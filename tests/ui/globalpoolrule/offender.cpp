// What tst_globalpoolrule_catches expects the rule to refuse (never built).
// QThreadPool::globalInstance() named in a comment is allowed.
void offences()
{
    QThreadPool::globalInstance()->start([] {});
    QtConcurrent::run([] { return 1; });
    QtConcurrent::run(fileWorkPool(), [] { return 1; }); // allowed
}
